/**
 * The one way the CLI prints: every text, on stdout and stderr, plain or JSON, is redacted of the
 * process's secrets (src/core/secrets.ts) and stripped of terminal control sequences, so a program's
 * stderr or a model's reply can neither show a token nor drive the terminal (OSC 52 clipboard writes,
 * clearing the screen). The CLI's own colours and cursor codes are added after this step, around
 * texts already cleaned (see view/).
 */
import { formatError, HatcheryError } from '../core/errors.js';
import { type RedactOptions, redactText, secretValues } from '../core/secrets.js';

/**
 * Whole escape sequences, 7-bit and 8-bit: CSI (`ESC [ ... final`), string commands that run to BEL or
 * ST (OSC `ESC ]`, DCS `ESC P`, SOS, PM, APC), and two-character escapes (`ESC c` resets the terminal).
 * A string command left open stops at the end of its line, so it cannot swallow the rest of a text.
 */
const ESCAPES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|(?:\x1b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\x07\x1b\u009c\n]*(?:\x07|\x1b\\|\u009c)?|\x1b[ -/]*[0-~]/g;
/** Control characters but newline and tab, removed once the sequences they start are gone. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** Anything that could start a control sequence: most texts have none and are returned as they are. */
const ANY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** Text safe to print on a terminal: no escape sequences, no carriage returns that overwrite a line. */
export function terminalSafe(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(ESCAPES, '').replace(CONTROL, '');
}

let processSecrets: readonly string[] | undefined;

/**
 * The secret values of this process's environment (see secretValues), computed on first use, plus
 * their JSON-escaped forms: a value with a quote or a backslash is spelled so in --json output.
 */
export function cliSecrets(): readonly string[] {
  if (processSecrets) return processSecrets;
  const values = secretValues(process.env);
  const escaped = values.map((v) => JSON.stringify(v).slice(1, -1)).filter((v, i) => v !== values[i]);
  processSecrets = [...values, ...escaped].sort((a, b) => b.length - a.length);
  return processSecrets;
}

/**
 * A text as the CLI prints it: redacted of `secrets` (the process's by default), then made terminal
 * safe, then redacted again, for a secret that an escape sequence had split in two.
 */
export function printable(
  text: string,
  secrets: readonly string[] = cliSecrets(),
  options: RedactOptions = {},
): string {
  const redacted = redactText(text, secrets, options);
  const safe = terminalSafe(redacted);
  return safe === redacted ? safe : redactText(safe, secrets, options);
}

/** Prints `text` on stdout, cleaned by printable. */
export function printOut(text: string): void {
  process.stdout.write(printable(text));
}

/** Prints `text` on stderr, cleaned by printable. */
export function printErr(text: string): void {
  process.stderr.write(printable(text));
}

/**
 * The JSON of `value` with every string in it made printable first (JSON would keep an escape
 * sequence as `\u001b...`, in which a secret it splits would not be recognised): for --json output.
 */
export function printableJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? printable(v) : v), space);
}

/**
 * The line `run` and `runs` print for a run's error: its code, as `--json` gives it
 * (`BUDGET_EXHAUSTED`, `MISSING_API_KEY`), which scripts and searches key on, then its message.
 */
export function errorLine(err: unknown): string {
  const code = err instanceof HatcheryError ? err.code : 'INTERNAL';
  return `error [${code}]: ${formatError(err)}\n`;
}
