/** Environment variable names whose values are secrets (API keys, tokens, passwords). */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;
/** Shorter values are left alone: replacing them would mangle ordinary words. */
const MIN_SECRET_LENGTH = 8;

/**
 * A function that replaces every known secret in a text by `[redacted]`: the values of secret-looking
 * environment variables and any extra secrets given (the --token). Applied to everything the server
 * logs or returns, as a last guard; nothing is supposed to carry a key in the first place.
 */
export function secretRedactor(
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly (string | undefined)[] = [],
): (text: string) => string {
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) secrets.add(value);
  }
  for (const v of extra) if (v && v.length >= MIN_SECRET_LENGTH) secrets.add(v);
  if (secrets.size === 0) return (text) => text;
  // Longest first, so a secret that contains another is replaced whole.
  const list = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of list) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return out;
  };
}
