import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { HatcheryError, ValidationError, type ValidationProblem } from '../core/errors.js';
import { type RealPathCheck, readTextChecked } from '../core/fs/safe-fs.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { compileHatchery, isError } from './compile.js';
import { capProblems } from './limits.js';
import { parseJson } from './parse.js';
import { SubFiles } from './sub-files.js';
import { validateDefinition } from './validate.js';

/** Result of checking one file: the hatchery when valid, otherwise every problem found. */
export type LoadResult = { ok: true; hatchery: Hatchery } | { ok: false; error: ValidationError };

/**
 * Validates and compiles a hatchery from its JSON text; `file` names it in errors and anchors relative
 * paths. `subs` is internal: the hatch: sub-file checker of a load in progress (one is made per load).
 */
export function loadHatcheryText(
  text: string,
  file: string,
  options: LoadOptions = {},
  subs?: SubFiles,
): LoadResult {
  const parsed = parseJson(text);
  if (parsed.problem) return invalid(file, [parsed.problem]);
  return loadHatcheryObject(parsed.value, file, options, subs);
}

/**
 * Validates and compiles a hatchery from a parsed definition (e.g. built in code). Any exception,
 * even a bug of ours, becomes this file's error: one bad file never stops a server or a reload.
 */
export function loadHatcheryObject(
  value: unknown,
  file: string,
  options: LoadOptions = {},
  subs?: SubFiles,
): LoadResult {
  try {
    const abs = file ? path.resolve(file) : '';
    // hatch: sub-files are checked recursively, once per load; `subs` is shared down the recursion.
    let sub = subs;
    if (!sub) {
      sub = new SubFiles(options, loadHatcheryText);
      if (abs) sub.enter(abs);
    }
    const { def, nodes, problems } = validateDefinition(value);
    if (!def || problems.some(isError)) return invalid(file, problems.filter(isError));
    // Warnings of validation travel on with the compile problems, so the hatchery carries them all.
    const compileProblems: ValidationProblem[] = [...problems];
    const hatchery = compileHatchery(abs, def, nodes, options, compileProblems, sub);
    if (!hatchery) return invalid(file, compileProblems.filter(isError));
    return { ok: true, hatchery };
  } catch (err) {
    return invalid(file, [{ path: '', message: unexpectedLoadError(err) }]);
  }
}

/** The message of an exception thrown while loading a file (not a problem the loader reported). */
export function unexpectedLoadError(err: unknown): string {
  const cut = (m: string) => (m.length > 200 ? `${m.slice(0, 200)}…` : m);
  if (err instanceof HatcheryError) return cut(err.message);
  const what = cut(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  return `the file could not be loaded (${what}); please report this as a bug of hatchery-mcp`;
}

function invalid(file: string, problems: ValidationProblem[]): LoadResult {
  return { ok: false, error: new ValidationError(file, capProblems(problems)) };
}

/** Reads, validates and compiles a hatchery file; throws a ValidationError listing every problem. */
export async function loadHatchery(file: string, options: LoadOptions = {}): Promise<Hatchery> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new HatcheryError(
      'NOT_FOUND',
      `cannot read hatchery file: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (code ?? (err as Error).message)}`,
      { file },
      { cause: err },
    );
  }
  const res = loadHatcheryText(text, file, options);
  if (!res.ok) throw res.error;
  return res.hatchery;
}

/** Every `*.json` file below `dir`, recursively, sorted; skips node_modules and dot-folders. */
export async function findHatcheryFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walkDir = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walkDir(p);
      else if (e.isFile() && e.name.endsWith('.json')) found.push(p);
    }
  };
  await walkDir(dir);
  return found.sort();
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
      throw new HatcheryError(
        'NOT_FOUND',
        'cannot read hatchery file: no such file',
        { file: abs },
        { cause: err },
      );
    }
    const hit = this.entries.get(abs);
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size) return hit.hatchery;
    const hatchery = check ? await this.loadChecked(abs, check) : await loadHatchery(abs, this.options);
    this.entries.set(abs, { mtimeMs: info.mtimeMs, size: info.size, hatchery });
    return hatchery;
  }

  private async loadChecked(abs: string, check: RealPathCheck): Promise<Hatchery> {
    let text: string;
    try {
      text = await readTextChecked(abs, check);
    } catch (err) {
      if (err instanceof HatcheryError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      throw new HatcheryError(
        'NOT_FOUND',
        `cannot read hatchery file: ${code === 'ENOENT' ? 'no such file' : (code ?? (err as Error).message)}`,
        { file: abs },
        { cause: err },
      );
    }
    const res = loadHatcheryText(text, abs, this.options);
    if (!res.ok) throw res.error;
    return res.hatchery;
  }
}
