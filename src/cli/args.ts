import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import { HatcheryError } from '../core/errors.js';

/** The parsed option values for an options config: strings, booleans, or arrays of them. */
export type ParsedValues<T extends NonNullable<ParseArgsConfig['options']>> = {
  [K in keyof T]?: T[K] extends { multiple: true }
    ? T[K] extends { type: 'boolean' }
      ? boolean[]
      : string[]
    : T[K] extends { type: 'boolean' }
      ? boolean
      : string;
};

/** Exit codes of the CLI (documented in the README). */
export const EXIT = {
  OK: 0,
  /** The run failed: model, tool, template or file error. */
  RUN_FAILED: 1,
  /** Bad command line. */
  USAGE: 2,
  /** One or more hatchery files are invalid. */
  INVALID: 3,
  /** Cancelled with Ctrl-C or SIGTERM. */
  CANCELLED: 130,
} as const;

/** Parses argv with node:util, turning its errors into USAGE errors that name the bad option. */
export function parseArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
): { values: ParsedValues<T>; positionals: string[] } {
  try {
    const { values, positionals } = nodeParseArgs({
      args: argv,
      options,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as ParsedValues<T>, positionals };
  } catch (err) {
    throw new HatcheryError('USAGE', (err as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
}

/** Parses a positive integer option, or throws a USAGE error naming it. */
export function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new HatcheryError('USAGE', `--${name} must be a positive integer, got "${value}"`);
  return n;
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
