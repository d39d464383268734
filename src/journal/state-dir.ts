import path from 'node:path';
import { shellQuote } from '../core/shell.js';

/** Where a process looks for run journals (see {@link stateDir}). */
export interface StateDirOptions {
  servedDir?: string;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

/**
 * The state folder runs are journaled in: `--state DIR`, else HATCHERY_STATE, else `.hatchery/runs`
 * beside the served folder (`serve --dir X`: `<parent of X>/.hatchery/runs`, never inside X, so runs
 * never change the served folder) or under the working folder (`run`, `runs`).
 */
export function stateDir(state: string | undefined, options: StateDirOptions = {}): string {
  const cwd = options.cwd ?? process.cwd();
  const given = state ?? (options.env ?? process.env).HATCHERY_STATE;
  if (given !== undefined && given !== '') return path.resolve(cwd, given);
  const base = options.servedDir === undefined ? cwd : path.dirname(path.resolve(cwd, options.servedDir));
  return path.join(base, '.hatchery', 'runs');
}

/**
 * The `hatchery-mcp runs ...` command that reaches the runs kept in `location` when pasted into the
 * shell this process runs in: with `--state DIR` (quoted as needed) unless `location` is the folder
 * `runs` reads without it, so a hint never sends the user to another state folder; with `--store URL`
 * for a database, unless HATCHERY_STORE names it already. `last` ends the
 * line (a placeholder such as `--answer TEXT`, where the user types over it).
 */
export function runsCommandLine(
  args: readonly string[],
  location: string,
  last: readonly string[] = [],
): string {
  const words = ['hatchery-mcp', 'runs', ...args];
  if (/^postgres(ql)?:/.test(location)) {
    // A database (its URL without credentials): the user's HATCHERY_STORE, or the same --store.
    if (process.env.HATCHERY_STORE === undefined) words.push('--store', location);
  } else {
    const own = path.resolve(location);
    if (own !== stateDir(undefined)) words.push('--state', own);
  }
  return [...words, ...last].map((w) => shellQuote(w)).join(' ');
}
