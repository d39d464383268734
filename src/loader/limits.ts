import { HatcheryError, type ValidationProblem } from '../core/errors.js';

/** Deepest nesting of objects and arrays a hatchery file may have; real files stay under 15. */
const MAX_NESTING_DEPTH = 64;
/** Problems listed for one file; the rest are counted ("and N more problems"). */
export const MAX_PROBLEMS = 20;
/** Longest problem message; longer ones (a nunjucks error quoting a template...) are cut. */
const MAX_PROBLEM_CHARS = 300;
/** Longest JSON path shown in a problem. */
const MAX_PATH_CHARS = 160;
/** Longest key shown as one segment of a JSON path. */
const MAX_SEGMENT_CHARS = 40;

/** One segment of a JSON path: a key cut to a readable length, or an index. */
export function segment(key: string | number): string | number {
  return typeof key === 'string' && key.length > MAX_SEGMENT_CHARS
    ? `${key.slice(0, MAX_SEGMENT_CHARS)}…`
    : key;
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

interface Frame {
  value: object;
  depth: number;
  key: string | number;
  parent: Frame | undefined;
}

/**
 * The problem of a value nested deeper than `limit`, found without recursion (the validators and
 * compilers after it recurse, and 2,000 levels overflow their stack); a cyclic object counts as too deep.
 */
export function nestingProblem(value: unknown, limit = MAX_NESTING_DEPTH): ValidationProblem | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: '', parent: undefined }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.depth > limit) {
      const keys: (string | number)[] = [];
      for (let p: Frame | undefined = f; p?.parent; p = p.parent) keys.push(segment(p.key));
      return {
        path: cut(keys.reverse().join('/'), MAX_PATH_CHARS),
        message: `objects and arrays are nested more than ${limit} levels deep here (the limit is ${limit}); a hatchery file needs far fewer levels, so flatten this value`,
      };
    }
    const v = f.value;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const c: unknown = v[i];
        if (c !== null && typeof c === 'object')
          stack.push({ value: c, depth: f.depth + 1, key: i, parent: f });
      }
    } else {
      for (const k of Object.keys(v)) {
        const c: unknown = (v as Record<string, unknown>)[k];
        if (c !== null && typeof c === 'object')
          stack.push({ value: c, depth: f.depth + 1, key: k, parent: f });
      }
    }
  }
  return undefined;
}

/**
 * The problems of one file as shown to users: at most MAX_PROBLEMS, each cut to a readable length,
 * then a count of the rest, so a huge broken file gives a short error that names the problems.
 */
export function capProblems(problems: readonly ValidationProblem[]): ValidationProblem[] {
  // Severity, fix and position travel with the problem; only the free texts are cut.
  const shown = problems.slice(0, MAX_PROBLEMS).map((p) => ({
    ...p,
    ...(p.fix === undefined ? {} : { fix: cut(p.fix, MAX_PROBLEM_CHARS) }),
    path: cut(p.path, MAX_PATH_CHARS),
    message: cut(p.message, MAX_PROBLEM_CHARS),
  }));
  const more = problems.length - shown.length;
  if (more > 0)
    shown.push({ path: '', message: `and ${more} more problem${more > 1 ? 's' : ''} (fix these first)` });
  return shown;
}

/**
 * Appends to `into` the problems of `more` it does not hold yet (same path and message), and returns
 * it: checks that overlap (validation and compile, graph and variable checks) report a problem once.
 */
export function addUnique(
  into: ValidationProblem[],
  more: readonly ValidationProblem[],
): ValidationProblem[] {
  const seen = new Set(into.map((p) => `${p.path}\n${p.message}`));
  for (const p of more) {
    const key = `${p.path}\n${p.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    into.push(p);
  }
  return into;
}

/** The message of an exception thrown while loading a file (not a problem the loader reported). */
export function unexpectedLoadError(err: unknown): string {
  if (err instanceof HatcheryError) return cut(err.message, 200);
  const what = cut(err instanceof Error ? `${err.name}: ${err.message}` : String(err), 200);
  return `the file could not be loaded (${what}); please report this as a bug of hatchery-mcp`;
}
