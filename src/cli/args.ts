import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import { parseBytes } from '../core/bytes.js';
import { HatcheryError } from '../core/errors.js';
import { nearest, quote } from '../schema/suggest.js';
import { printOut } from './print.js';

/** The parsed option values for an options config: strings, booleans, or arrays of them. */
export type ParsedValues<T extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof nodeParseArgs<{ options: T; strict: true; allowPositionals: true }>
>['values'];

/** Exit codes of the CLI (documented in the help texts and docs/terminal.md). */
export const EXIT = {
  OK: 0,
  /** The run failed: model, tool, template or file error. */
  RUN_FAILED: 1,
  /** Bad command line. */
  USAGE: 2,
  /** One or more hatchery files are invalid. */
  INVALID: 3,
  /** The run waits for an answer (an ask node or approve: true, no terminal to ask on): resume it with the answer. */
  INPUT_REQUIRED: 4,
  /** The run's budget (--budget-* or the file's) ran out: BUDGET_EXHAUSTED. */
  BUDGET: 5,
  /** Cancelled with Ctrl-C or SIGTERM, or by `runs cancel` from another process. */
  CANCELLED: 130,
} as const;

/** Pointer to the help appended to a usage error, so the whole help is not printed again. */
export function helpPointer(command?: string): string {
  return command
    ? `run "hatchery-mcp ${command} --help" for its options`
    : 'run "hatchery-mcp --help" for the commands';
}

/** The option of a parseArgs message ('-q, --quiet' -> "--quiet"), in the spelling a user types. */
function optionOf(message: string, options: NonNullable<ParseArgsConfig['options']>): string {
  const m = /'(?:-\w, )?(-{1,2}[^' ]+)/.exec(message);
  const opt = m?.[1] ?? '';
  const short = /^-(\w)$/.exec(opt)?.[1];
  const long = short ? Object.entries(options).find(([, o]) => o.short === short)?.[0] : undefined;
  return long ? `--${long}` : opt;
}

/** node:util's parse error as one sentence that names the option, the command and the fix. */
function usageMessage(
  err: Error & { code?: string },
  argv: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
  command: string,
): string {
  const forCmd = ` for ${quote(command)}`;
  const opt = optionOf(err.message, options);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    // Long options only, compared without dashes: a one-letter option is no typo of anything.
    const word = opt.replace(/=.*$/, '').replace(/^--/, '');
    const name = opt.startsWith('--') ? nearest(word, Object.keys(options)) : undefined;
    const near = name && `--${name}`;
    return `unknown option ${quote(opt)}${forCmd}${near ? `; did you mean ${quote(near)}?` : ''}\n${helpPointer(command)}`;
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(err.message))
      return `option ${quote(opt)}${forCmd} takes no value; write ${opt} alone`;
    if (/ambiguous/.test(err.message)) {
      const i = argv.findIndex(
        (a) => a === opt || (opt.startsWith('--') && a === `-${options[opt.slice(2)]?.short}`),
      );
      const next = i >= 0 ? argv[i + 1] : undefined;
      return `option ${quote(opt)}${forCmd} needs a value, but ${next ? quote(next) : 'the next argument'} is an option; write ${opt}=<value> for a value that starts with "-"`;
    }
    return `option ${quote(opt)}${forCmd} needs a value; write ${opt} <value>`;
  }
  return err.message.replace(/\. To specify a positional.*$/s, '');
}

/**
 * Parses the argv of `command` (e.g. "run") with node:util, `-h`/`--help` added to its options:
 * prints `help` and returns undefined when asked for it. Parse errors become USAGE errors that name
 * the bad option and the command, with the nearest valid option for a misspelt one.
 */
export function parseCommand<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  command: string,
  help: string,
  commandOptions: T,
): { values: ParsedValues<T>; positionals: string[] } | undefined {
  const options = { ...commandOptions, help: { type: 'boolean', short: 'h' } } as const;
  let parsed: ReturnType<typeof nodeParseArgs>;
  try {
    parsed = nodeParseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new HatcheryError('USAGE', usageMessage(err as Error, argv, options, command));
  }
  if (!parsed.values.help)
    return { values: parsed.values as ParsedValues<T>, positionals: parsed.positionals };
  printOut(`${help}\n`);
  return undefined;
}

/** Refuses the arguments of a command that takes none: its folder goes after --dir. */
export function noArguments(positionals: readonly string[], more = ''): void {
  if (positionals.length > 0)
    throw new HatcheryError(
      'USAGE',
      `unexpected argument "${positionals[0]}" (the folder goes after --dir)${more}`,
    );
}

/** Parses a positive integer option, or throws a USAGE error naming it. */
export function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new HatcheryError('USAGE', `--${name} must be a positive integer, got "${value}"`);
  return n;
}

/** Parses a size option (`4194304`, `512KiB`, `4MiB`, `1GiB`) in bytes, or throws a USAGE error naming it. */
export function bytesOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = parseBytes(value);
  if (n === undefined || n < 1)
    throw new HatcheryError(
      'USAGE',
      `--${name} must be a size in bytes, optionally with a unit (4194304, 512KiB, 4MiB, 1GiB), got "${value}"`,
    );
  return n;
}

/** Parses a duration option in seconds (0 allowed, fractions too) into milliseconds. */
export function secondsOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 86_400)
    throw new HatcheryError('USAGE', `--${name} must be a number of seconds from 0 to 86400, got "${value}"`);
  return Math.round(n * 1000);
}

/**
 * Parses repeated `name=value` options into a map without a prototype: `--set __proto__=x` is then a
 * name like any other (refused later as undeclared) instead of silently replacing the map's prototype.
 */
export function keyValues(values: string[] | undefined, option: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const kv of values ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new HatcheryError('USAGE', `--${option} expects name=value, got "${kv}"`);
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}
