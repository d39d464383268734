/**
 * The first half of loading a hatchery file, what listing it as a tool needs: parse and validate
 * (load.ts compiles and analyses). It imports no template engine, node kind or tool, so a server can
 * list its files before it loads those (see mcp/registry.ts).
 */
import { bySourcePosition, isError, ValidationError, type ValidationProblem } from '../core/errors.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { HatcheryGraph } from '../engine/graph.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import { fromDesign, isDesign } from './design.js';
import { capProblems, MAX_PROBLEMS, unexpectedLoadError } from './limits.js';
import { parseJson } from './parse.js';
import { locateProblems } from './positions.js';
import type { SubFiles } from './sub-files.js';
import { type ValidNode, validateDefinition } from './validate.js';
import { isYamlFile, parseYaml } from './yaml.js';

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
  /** The hatch: sub-file checker of the load this one is part of (compile makes one otherwise). */
  readonly subs?: SubFiles;
}

/** The problem of a parsed file that has no "nodes": it is some other JSON or YAML file. */
const NOT_A_HATCHERY: ValidationProblem = {
  path: '',
  message: 'not a hatchery file: it has no "nodes" (a hatchery is an object with "name", "desc" and "nodes")',
};

/**
 * Result of checking one file: the hatchery when valid, otherwise every problem found. `notHatchery`
 * marks a file that is no hatchery at all (no "nodes": a package.json, a tsconfig, a test file), which
 * a folder scan skips quietly.
 */
export type LoadResult =
  | { ok: true; hatchery: Hatchery }
  | { ok: false; error: ValidationError; notHatchery?: boolean };

/** What loading a parsed value gives, before problems are located and capped. */
export type Loaded = { hatchery: Hatchery } | { problems: ValidationProblem[]; notHatchery?: boolean };

/** The value of a hatchery file's text, JSON or YAML by its extension, or the syntax problem. */
export function parseHatcheryText(
  text: string,
  file: string,
): { value?: unknown; problem?: ValidationProblem } {
  return isYamlFile(file) ? parseYaml(text) : parseJson(text);
}

/** True for a value that is surely some other JSON or YAML file: an object without "nodes". */
export function isOtherFile(value: unknown): boolean {
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && !Object.hasOwn(value, 'nodes')
  );
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
): { ok: true; prepared: PreparedLoad } | Extract<LoadResult, { ok: false }> {
  const parsed = parseHatcheryText(text, file);
  if (parsed.problem) return invalid(file, [parsed.problem]) as Extract<LoadResult, { ok: false }>;
  const res = prepareValue(parsed.value, file, options);
  if (!('prepared' in res)) return finish(text, file, res) as Extract<LoadResult, { ok: false }>;
  res.prepared.text = text;
  return { ok: true, prepared: res.prepared };
}

/** Problems located in the text (line, column) and sorted as an editor lists them; warnings too. */
export function finish(text: string, file: string, res: Loaded): LoadResult {
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

/** The first half of a load from a parsed value; with errors, `rest` is what of it can still be compiled. */
export function prepareValue(
  value: unknown,
  file: string,
  options: LoadOptions,
  subs?: SubFiles,
):
  | { prepared: PreparedLoad }
  | { problems: ValidationProblem[]; notHatchery?: boolean; rest?: PreparedLoad } {
  try {
    if (isOtherFile(value)) return { problems: [{ ...NOT_A_HATCHERY }], notHatchery: true };
    const design = isDesign(value) ? fromDesign(value as Record<string, unknown>, file) : undefined;
    const { def, nodes, problems, draft } = validateDefinition(design ? design.value : value);
    if (design) {
      problems.unshift(...design.problems);
      for (const p of problems) p.path = design.sourcePath(p.path);
    }
    // A file that fails lists its warnings too: every problem of the file, once. What is valid of it
    // goes on to be compiled (load.ts), so its other problems are reported in the same pass.
    const ok = def !== undefined && !problems.some(isError);
    const base = def ?? draft;
    if (base === undefined || (!ok && nodes.length === 0)) return { problems };
    const graph = new HatcheryGraph(base.start, nodes);
    const load = { file, def: base, nodes, graph, problems, options, design, subs };
    return ok ? { prepared: load } : { problems, rest: load };
  } catch (err) {
    return { problems: [{ path: '', message: unexpectedLoadError(err) }] };
  }
}

/** The failed result of `file`, its problems capped as shown to users. */
export function invalid(file: string, problems: ValidationProblem[], notHatchery?: boolean): LoadResult {
  const error = new ValidationError(file, capProblems(problems));
  return notHatchery ? { ok: false, error, notHatchery } : { ok: false, error };
}
