/**
 * The one secret policy: which environment variables hold secrets, which of them may reach child
 * processes, and how a text is cleaned of secrets before anyone sees it (MCP clients, logs, provider
 * error messages). Nothing is supposed to carry a secret in the first place; this is the last guard.
 */

/** Environment variable names whose values are secrets: API keys, tokens, passwords, credentials. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/** Shorter values are left alone: replacing them would mangle ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** True when an environment variable of this name holds a secret (`OPENAI_API_KEY`, `GH_TOKEN`...). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** API keys in the shape of the common vendors (`sk-...`): unambiguous in any text. */
const KEY_SHAPE = /\bsk-[A-Za-z0-9_-]{6,}/g;
/**
 * Authorization header values. Only for texts that echo HTTP traffic (error bodies, URLs): in prose,
 * "basic example" would be mangled.
 */
const AUTH_SHAPE = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;

/** How redactText marks what it removed, and which secret shapes it looks for. */
export interface RedactOptions {
  /** What replaces a secret (default `[redacted]`); shapes keep their prefix: `sk-<mark>`, `Bearer <mark>`. */
  mark?: string;
  /** Also remove authorization header values (`Bearer x`, `Basic x`): set for texts that echo HTTP. */
  authHeaders?: boolean;
}

/**
 * The secret values of an environment (variables with a secret name, see isSecretName) plus `extra`
 * ones (an API key, the --token), without the short ones; longest first, so that a secret that
 * contains another is replaced whole.
 */
export function secretValues(
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly (string | undefined)[] = [],
): string[] {
  const secrets = new Set<string>();
  for (const name in env) {
    const value = env[name];
    if (value && value.length >= MIN_SECRET_LENGTH && isSecretName(name)) secrets.add(value);
  }
  for (const v of extra) if (v && v.length >= MIN_SECRET_LENGTH) secrets.add(v);
  return [...secrets].sort((a, b) => b.length - a.length);
}

/** Replaces the known secret `values` (see secretValues) and secret-shaped strings in a text. */
export function redactText(text: string, values: readonly string[], options: RedactOptions = {}): string {
  const mark = options.mark ?? '[redacted]';
  let out = text;
  for (const s of values) if (s.length >= MIN_SECRET_LENGTH && out.includes(s)) out = out.split(s).join(mark);
  if (out.includes('sk-')) out = out.replace(KEY_SHAPE, `sk-${mark}`);
  if (options.authHeaders) out = out.replace(AUTH_SHAPE, (m) => `${m.split(/\s/)[0]} ${mark}`);
  return out;
}

/**
 * A function that redacts a text of the secrets of `env` and of `extra` values (see secretValues),
 * and of key-shaped strings; its secret list is computed once.
 */
export function secretRedactor(
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly (string | undefined)[] = [],
  options: RedactOptions = {},
): (text: string) => string {
  const values = secretValues(env, extra);
  return (text) => redactText(text, values, options);
}
