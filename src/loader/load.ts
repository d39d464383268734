import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  bySourcePosition,
  HatcheryError,
  isError,
  ValidationError,
  type ValidationProblem,
} from '../core/errors.js';
import { type RealPathCheck, readFailure, readTextChecked } from '../core/fs/safe-fs.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { HatcheryGraph } from '../engine/graph.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import { nearestSibling } from '../tools/compile.js';
import { compileHatchery } from './compile.js';
import { fromDesign, isDesign } from './design.js';
import { type IgnoreRules, ignoreRulesOf } from './ignore.js';
import { capProblems, MAX_PROBLEMS } from './limits.js';
import { parseJson } from './parse.js';
import { locateProblems } from './positions.js';
import { SubFiles } from './sub-files.js';
import { type ValidNode, validateDefinition } from './validate.js';
import { isYamlFile, parseYaml } from './yaml.js';

/**
 * Result of checking one file: the hatchery when valid, otherwise every problem found. `notHatchery`
 * marks a file that is no hatchery at all (no "nodes": a package.json, a tsconfig, a test file), which
 * a folder scan skips quietly.
 */
export type LoadResult =
  | { ok: true; hatchery: Hatchery }
  | { ok: false; error: ValidationError; notHatchery?: boolean };

/** The problem of a parsed file that has no "nodes": it is some other JSON or YAML file. */
const NOT_A_HATCHERY: ValidationProblem = {
  path: '',
  message: 'not a hatchery file: it has no "nodes" (a hatchery is an object with "name", "desc" and "nodes")',
};

/** What loading a parsed value gives, before problems are located and capped. */
type Loaded = { hatchery: Hatchery } | { problems: ValidationProblem[]; notHatchery?: boolean };

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
  const first = prepareHatcheryText(text, file, options, subs);
  return first.ok ? completeHatcheryText(first.prepared) : first;
}

/**
 * The first half of a load, what a served file's tool definition needs: the text parsed and the
 * definition validated (schema, node names, references), nothing compiled. A file that fails here
 * gets the same error as from loadHatcheryText; completeHatcheryText does the rest.
 */
export function prepareHatcheryText(
  text: string,
  file: string,
  options: LoadOptions = {},
  subs?: SubFiles,
): { ok: true; prepared: PreparedLoad } | Extract<LoadResult, { ok: false }> {
  const parsed = isYamlFile(file) ? parseYaml(text) : parseJson(text);
  if (parsed.problem) return invalid(file, [parsed.problem]) as Extract<LoadResult, { ok: false }>;
  const res = prepareValue(parsed.value, file, options, subs);
  if ('prepared' in res) {
    res.prepared.text = text;
    return { ok: true, prepared: res.prepared };
  }
  return finish(text, file, res) as Extract<LoadResult, { ok: false }>;
}

/**
 * The second half of a load (prepareHatcheryText's): templates, node kinds and tool references
 * compiled, and the whole-file analysis. Problems found here are reported as loadHatcheryText would.
 */
export function completeHatcheryText(prepared: PreparedLoad): LoadResult {
  return finish(prepared.text ?? '', prepared.file, completeValue(prepared));
}

/** Problems located in the text (line, column) and sorted as an editor lists them; warnings too. */
function finish(text: string, file: string, res: Loaded): LoadResult {
  if ('hatchery' in res) {
    // Positions are looked up only when there is something to show, so a clean load parses once.
    if (res.hatchery.warnings.length > 0) {
      locateProblems(text, res.hatchery.warnings);
      (res.hatchery.warnings as ValidationProblem[]).sort(bySourcePosition);
    }
    return { ok: true, hatchery: res.hatchery };
  }
  const shown = res.problems.slice(0, MAX_PROBLEMS);
  locateProblems(text, shown);
  // In the order of the file, as an editor lists them; checks run in another order (schema, graph, templates).
  shown.sort(bySourcePosition);
  return invalid(file, shown.concat(res.problems.slice(MAX_PROBLEMS)), res.notHatchery);
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
  const first = prepareValue(value, file, options, subs);
  const res = 'prepared' in first ? completeValue(first.prepared) : first;
  return 'hatchery' in res
    ? { ok: true, hatchery: res.hatchery }
    : invalid(file, res.problems, res.notHatchery);
}

/** A definition validated and not yet compiled (see prepareHatcheryText). */
export interface PreparedLoad {
  readonly file: string;
  readonly def: HatcheryDef;
  readonly nodes: ValidNode[];
  /** The graph of the validated nodes (compile uses it again). */
  readonly graph: HatcheryGraph;
  /** Warnings of validation so far. */
  readonly problems: ValidationProblem[];
  readonly options: LoadOptions;
  /** The file's text, when loaded from text. */
  text?: string;
  readonly design?: ReturnType<typeof fromDesign>;
  readonly subs: SubFiles;
}

function prepareValue(
  value: unknown,
  file: string,
  options: LoadOptions,
  subs?: SubFiles,
): { prepared: PreparedLoad } | { problems: ValidationProblem[]; notHatchery?: boolean } {
  try {
    if (
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      !Object.hasOwn(value, 'nodes')
    )
      return { problems: [{ ...NOT_A_HATCHERY }], notHatchery: true };
    const design = isDesign(value) ? fromDesign(value as Record<string, unknown>, file) : undefined;
    const abs = file ? path.resolve(file) : '';
    // hatch: sub-files are checked recursively, once per load; `subs` is shared down the recursion.
    let sub = subs;
    if (!sub) {
      sub = new SubFiles(options, loadHatcheryText);
      if (abs) sub.enter(abs);
    }
    const { def, nodes, problems } = validateDefinition(design ? design.value : value);
    if (design) {
      problems.unshift(...design.problems);
      for (const p of problems) p.path = design.sourcePath(p.path);
    }
    // A file that fails lists its warnings too: every problem of the file, once.
    if (!def || problems.some(isError)) return { problems };
    const graph = new HatcheryGraph(def.start, nodes);
    return { prepared: { file, def, nodes, graph, problems, options, design, subs: sub } };
  } catch (err) {
    return { problems: [{ path: '', message: unexpectedLoadError(err) }] };
  }
}

function completeValue(p: PreparedLoad): Loaded {
  try {
    const abs = p.file ? path.resolve(p.file) : '';
    // Warnings of validation travel on with the compile problems, so the hatchery carries them all.
    const compileProblems: ValidationProblem[] = [...p.problems];
    const hatchery = compileHatchery(abs, p.def, p.nodes, p.options, compileProblems, p.subs, p.graph);
    if (p.design) for (const q of compileProblems) q.path = p.design.sourcePath(q.path);
    if (!hatchery) return { problems: compileProblems };
    return { hatchery };
  } catch (err) {
    return { problems: [{ path: '', message: unexpectedLoadError(err) }] };
  }
}

/** The message of an exception thrown while loading a file (not a problem the loader reported). */
export function unexpectedLoadError(err: unknown): string {
  const cut = (m: string) => (m.length > 200 ? `${m.slice(0, 200)}…` : m);
  if (err instanceof HatcheryError) return cut(err.message);
  const what = cut(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  return `the file could not be loaded (${what}); please report this as a bug of hatchery-mcp`;
}

function invalid(file: string, problems: ValidationProblem[], notHatchery?: boolean): LoadResult {
  const error = new ValidationError(file, capProblems(problems));
  return notHatchery ? { ok: false, error, notHatchery } : { ok: false, error };
}

/** Why a hatchery file could not be read, with the nearest file's name when it does not exist. */
function cannotRead(file: string, err: unknown): string {
  const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
  return `cannot read hatchery file: ${readFailure(err)}${missing ? nearestSibling(path.resolve(file), 'hatch') : ''}`;
}

/** Reads, validates and compiles a hatchery file; throws a ValidationError listing every problem. */
export async function loadHatchery(file: string, options: LoadOptions = {}): Promise<Hatchery> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new HatcheryError('NOT_FOUND', cannotRead(file, err), { file }, { cause: err });
  }
  const res = loadHatcheryText(text, file, options);
  if (!res.ok) throw res.error;
  return res.hatchery;
}

/** True for a file name a hatchery can have: `.json`, `.yaml`, `.yml`. */
export function isHatcheryFileName(name: string): boolean {
  return name.endsWith('.json') || isYamlFile(name);
}

/**
 * Every file below `dir` with a hatchery's extension (`*.json`, `*.yaml`, `*.yml`), recursively,
 * sorted, read by name only: skips node_modules, dot-folders and paths the folder's `.hatcheryignore`
 * excludes. A loader that skips results marked `notHatchery` needs nothing more (the server does).
 */
export async function listHatcheryFileNames(dir: string, rules?: IgnoreRules): Promise<string[]> {
  const ignore = rules ?? (await ignoreRulesOf(dir));
  const found: string[] = [];
  const walkDir = async (d: string, rel: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = path.join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!ignore.matches(r, true)) await walkDir(p, r);
      } else if (e.isFile() && isHatcheryFileName(e.name) && !ignore.matches(r, false)) found.push(p);
    }
  };
  await walkDir(dir, '');
  return found.sort();
}

/**
 * Every hatchery file below `dir`: listHatcheryFileNames without the files that are no hatchery (no
 * top-level "nodes": package.json, a tsconfig), so those are never reported as broken.
 */
export async function findHatcheryFiles(dir: string, rules?: IgnoreRules): Promise<string[]> {
  const found = await listHatcheryFileNames(dir, rules);
  const texts = await Promise.all(found.map((f) => readFile(f, 'utf8').catch(() => undefined)));
  return found.filter((f, i) => mayBeHatchery(f, texts[i]));
}

/**
 * False for a file that is surely some other JSON or YAML file: it parses, and has no "nodes". An
 * unreadable or broken file stays listed, so loading it reports why.
 */
function mayBeHatchery(file: string, text: string | undefined): boolean {
  if (text === undefined) return true;
  const { value, problem } = isYamlFile(file) ? parseYaml(text) : parseJson(text);
  if (problem) return true;
  return !(
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    !Object.hasOwn(value, 'nodes')
  );
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
      throw new HatcheryError('NOT_FOUND', cannotRead(abs, err), { file: abs }, { cause: err });
    }
    const res = loadHatcheryText(text, abs, this.options);
    if (!res.ok) throw res.error;
    return res.hatchery;
  }
}
