/**
 * Start-up's quick first half of a load: a file in the common shapes (schema/fast-check.ts decides it
 * whole, and it has no problem) is parsed, checked and graphed without the zod schemas, the issue
 * wording or the position finder, so `serve` lists such files before it imports those (prepare.ts).
 * Any other file, or one with a problem, gets undefined here and goes through prepareHatcheryText,
 * which gives the same PreparedLoad for the files this one decides.
 */
import { HatcheryError, ValidationError, type ValidationProblem } from '../core/errors.js';
import type { LoadOptions } from '../engine/contracts.js';
import { HatcheryGraph } from '../engine/graph.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import type { fromDesign } from './design.js';
import { resetSuggestions, type ValidNode, validateQuickly } from './graph-check.js';
import { nestingProblem } from './limits.js';
import { parseJson } from './parse.js';
import type { SubFiles } from './sub-files.js';
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
export const NOT_A_HATCHERY: ValidationProblem = {
  path: '',
  message: 'not a hatchery file: it has no "nodes" (a hatchery is an object with "name", "desc" and "nodes")',
};

/** What the quick first half decides: a prepared load, or a JSON file that is no hatchery at all. */
export type QuickLoad =
  | { ok: true; prepared: PreparedLoad }
  | { ok: false; error: ValidationError; notHatchery: true };

/**
 * prepareHatcheryText's result for a file in the common shapes with no problem, or for a JSON object
 * without "nodes" written from its first character (a package.json: no hatchery, its one problem at
 * line 1, column 1); undefined when prepareHatcheryText must decide (another shape, a problem, a
 * design file, YAML that is no hatchery).
 */
export function quickLoad(
  text: string,
  file: string,
  options: LoadOptions = {},
  subs?: SubFiles,
): QuickLoad | undefined {
  try {
    const yaml = isYamlFile(file);
    const parsed = yaml ? parseYaml(text) : parseJson(text);
    const value = parsed.value;
    if (parsed.problem || value === null || typeof value !== 'object' || Array.isArray(value))
      return undefined;
    if (!Object.hasOwn(value, 'nodes')) {
      if (yaml || text.charCodeAt(0) !== 123 || nestingProblem(value)) return undefined;
      const error = new ValidationError(file, [{ ...NOT_A_HATCHERY, line: 1, column: 1 }]);
      return { ok: false, error, notHatchery: true };
    }
    // A design file (design.ts) never passes here: its node types, `id` and `provider` are unknown to
    // the fast check, and a `next` with `::` names no node (names have no ":"), a problem.
    if (nestingProblem(value)) return undefined;
    resetSuggestions();
    const res = validateQuickly(value);
    if (!res?.def || res.problems.length > 0) return undefined;
    const { def, nodes, problems } = res;
    const graph = new HatcheryGraph(def.start, nodes);
    return {
      ok: true,
      prepared: { file, def, nodes, graph, problems, options, design: undefined, subs, text },
    };
  } catch {
    // prepareHatcheryText reports it, as it reports any exception of a load.
    return undefined;
  }
}

/** The message of an exception thrown while loading a file (not a problem the loader reported). */
export function unexpectedLoadError(err: unknown): string {
  const cut = (m: string) => (m.length > 200 ? `${m.slice(0, 200)}…` : m);
  if (err instanceof HatcheryError) return cut(err.message);
  const what = cut(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  return `the file could not be loaded (${what}); please report this as a bug of hatchery-mcp`;
}
