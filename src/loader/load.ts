import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { HatcheryError, isError, type ValidationProblem } from '../core/errors.js';
import { type RealPathCheck, readFailure, readTextChecked } from '../core/fs/safe-fs.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { nearestSibling } from '../tools/compile.js';
import { compileHatchery } from './compile.js';
import { listHatcheryFileNames } from './file-names.js';
import type { IgnoreRules } from './ignore.js';
import { addUnique, unexpectedLoadError } from './limits.js';
import {
  finish,
  invalid,
  isOtherFile,
  type Loaded,
  type LoadResult,
  type PreparedLoad,
  parseHatcheryText,
  prepareValue,
} from './prepare.js';
import { SubFiles } from './sub-files.js';

export { listHatcheryFileNames } from './file-names.js';
export { unexpectedLoadError } from './limits.js';
export { type LoadResult, type PreparedLoad, prepareHatcheryText } from './prepare.js';

/**
 * Validates and compiles a hatchery from its text, JSON or YAML by the extension of `file` (.yaml,
 * .yml); `file` names it in errors and anchors relative paths. Problems and warnings carry the line
 * and column of their path in `text`. `subs` is internal: the hatch: sub-file checker of a load in
 * progress (one is made per load).
 */
export function loadHatcheryText(
  text: string,
  file: string,
  options: LoadOptions = {},
  subs?: SubFiles,
): LoadResult {
  const parsed = parseHatcheryText(text, file);
  if (parsed.problem) return invalid(file, [parsed.problem]);
  return loadValue(parsed.value, file, options, subs, text);
}

/**
 * The second half of a load (prepareHatcheryText's): templates, node kinds and tool references
 * compiled, and the whole-file analysis. Problems found here are reported as loadHatcheryText would.
 * `options` replaces the options the first half was given (a server's roots known only by now).
 */
export function completeHatcheryText(prepared: PreparedLoad, options?: LoadOptions): LoadResult {
  return finish(prepared.text ?? '', prepared.file, completeValue(prepared, options));
}

/**
 * Validates and compiles a hatchery from a parsed definition (e.g. built in code). Any exception,
 * even a bug of ours, becomes this file's error: one bad file never stops a server or a reload.
 */
export function loadHatcheryObject(value: unknown, file: string, options: LoadOptions = {}): LoadResult {
  return loadValue(value, file, options);
}

/** Both halves of a load; a file broken in the first has the rest checked too, in the same pass. */
function loadValue(
  value: unknown,
  file: string,
  options: LoadOptions,
  subs?: SubFiles,
  text = '',
): LoadResult {
  const first = prepareValue(value, file, options, subs);
  if ('prepared' in first) return finish(text, file, completeValue(first.prepared));
  return finish(text, file, first.rest ? completeValue(first.rest) : first);
}

function completeValue(p: PreparedLoad, options = p.options): Loaded {
  try {
    const abs = p.file ? path.resolve(p.file) : '';
    // hatch: sub-files are checked recursively, once per load; `subs` is shared down the recursion.
    let sub = p.subs;
    if (!sub) {
      sub = new SubFiles(options, loadHatcheryText);
      if (abs) sub.enter(abs);
    }
    // Warnings of validation travel on with the compile problems, so the hatchery carries them all.
    const compileProblems: ValidationProblem[] = [...p.problems];
    const own = p.problems.length;
    const hatchery = compileHatchery(abs, p.def, p.nodes, options, compileProblems, sub, p.graph);
    // The first half's problems have their paths in the file's terms already.
    if (p.design) for (const q of compileProblems.slice(own)) q.path = p.design.sourcePath(q.path);
    if (!hatchery) {
      // Of a file already broken, only the rest's errors: its warnings (a node unreachable through a
      // misspelt `next`) are often what the errors cause, and come once those are fixed.
      if (!p.problems.some(isError)) return { problems: compileProblems };
      // The checks of the rest may find what validation found: each problem once.
      return { problems: addUnique([], [...p.problems, ...compileProblems.slice(own).filter(isError)]) };
    }
    return { hatchery };
  } catch (err) {
    // A file known to be broken keeps the problems found before: the rest was checked as far as it could be.
    if (p.problems.some(isError)) return { problems: p.problems };
    return { problems: [{ path: '', message: unexpectedLoadError(err) }] };
  }
}

/** Why a hatchery file could not be read, with the nearest file's name when it does not exist. */
function cannotRead(file: string, err: unknown): string {
  const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
  const abs = path.resolve(file);
  // The message itself names the file: a program embedding the library may print only `message`.
  const where =
    missing && abs !== file ? ` (looked for ${abs}: a relative path is taken from the working folder)` : '';
  return `${file}: cannot read hatchery file: ${readFailure(err)}${where}${missing ? nearestSibling(abs, 'hatch') : ''}`;
}

/** Reads, validates and compiles a hatchery file; throws a ValidationError listing every problem. */
export function loadHatchery(file: string, options: LoadOptions = {}): Promise<Hatchery> {
  return loadFile(file, options);
}

/** loadHatchery; with `check`, read through a descriptor whose real path `check` approves. */
async function loadFile(file: string, options: LoadOptions, check?: RealPathCheck): Promise<Hatchery> {
  let text: string;
  try {
    text = check ? await readTextChecked(file, check) : await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof HatcheryError) throw err;
    throw new HatcheryError('NOT_FOUND', cannotRead(file, err), { file }, { cause: err });
  }
  const res = loadHatcheryText(text, file, options);
  if (!res.ok) throw res.error;
  return res.hatchery;
}

/**
 * Every hatchery file below `dir`: listHatcheryFileNames without the files that are no hatchery (no
 * top-level "nodes": package.json, a tsconfig), so those are never reported as broken.
 */
export async function findHatcheryFiles(dir: string, rules?: IgnoreRules): Promise<string[]> {
  const found = await listHatcheryFileNames(dir, rules);
  const texts = await Promise.all(found.map((f) => readFile(f, 'utf8').catch(() => undefined)));
  // An unreadable or broken file stays listed, so loading it reports why.
  return found.filter((f, i) => {
    const text = texts[i];
    if (text === undefined) return true;
    const { value, problem } = parseHatcheryText(text, f);
    return problem !== undefined || !isOtherFile(value);
  });
}

/**
 * Caches loaded hatcheries by absolute path and reloads a file when its modification time or size
 * changes, so hatch: tools always run the current version of their file.
 */
export class HatcheryCache {
  private readonly entries = new Map<string, { mtimeMs: number; size: number; hatchery: Hatchery }>();

  constructor(private readonly options: LoadOptions = {}) {}

  /**
   * The current hatchery at `file`; throws NOT_FOUND or a ValidationError. With `check`, the file is
   * read through a descriptor whose real path `check` approves (a hatch: target confined to roots).
   */
  async get(file: string, check?: RealPathCheck): Promise<Hatchery> {
    const abs = path.resolve(file);
    let info: { mtimeMs: number; size: number };
    try {
      info = await stat(abs);
    } catch (err) {
      this.entries.delete(abs);
      throw new HatcheryError('NOT_FOUND', cannotRead(abs, err), { file: abs }, { cause: err });
    }
    const hit = this.entries.get(abs);
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size) return hit.hatchery;
    const hatchery = await loadFile(abs, this.options, check);
    this.entries.set(abs, { mtimeMs: info.mtimeMs, size: info.size, hatchery });
    return hatchery;
  }
}
