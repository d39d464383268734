import path from 'node:path';
import { HatcheryError, isError, type ValidationProblem } from '../core/errors.js';
import type {
  CompileContext,
  CompiledNode,
  Hatchery,
  LoadOptions,
  NodeBase,
  Router,
} from '../engine/contracts.js';
import { HatcheryGraph } from '../engine/graph.js';
import { Template } from '../engine/templates/templates.js';
import { NODE_IMPLS } from '../nodes/index.js';
import { clientFallbackProblem, modelSpecProblem } from '../providers/resolve.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import { END } from '../schema/names.js';
import { serverCwdProblems } from '../tools/mcp-entry.js';
import { type LoadRoots, readPathProblem, writePathProblem } from '../tools/path-check.js';
import { analyzeHatchery, type TemplateUse, usedTemplate } from './analysis/index.js';
import { templateRefs } from './analysis/template-refs.js';
import type { SubFiles } from './sub-files.js';
import { didYouMean, type ValidNode } from './validate.js';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/** The router of every node that ends the run (immutable, so shared). */
const END_ROUTER: Router = Object.freeze({ kind: 'end' });

/**
 * Links each node with a fixed `next` to its successor (CompiledNode.successor), so a run follows
 * it without a lookup by name.
 */
function linked(nodes: Map<string, CompiledNode>): Map<string, CompiledNode> {
  for (const node of nodes.values()) {
    const r = node.route;
    // A target that is no node (reported by the graph checks) keeps the lookup by name and its error.
    node.successor = r.kind === 'one' ? nodes.get(r.target) : undefined;
  }
  return nodes;
}

/** Compiles `next` into a router; list entries become whole-word tests, the last entry the default. */
function compileRouter(next: string | string[] | undefined): Router {
  if (next === undefined) return { kind: 'end' };
  const list = typeof next === 'string' ? [next] : next;
  if (list.length === 1) return list[0] === END ? END_ROUTER : { kind: 'one', target: list[0]! };
  return {
    kind: 'list',
    targets: list,
    // A whole word: not preceded or followed by a letter, digit or underscore.
    tests: list.map((t) => new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(t)}(?![A-Za-z0-9_])`)),
    fallback: list[list.length - 1]!,
  };
}

/**
 * The top-level `output` template, rendered when a run ends: its syntax, filters, and the names it
 * reads (a node for `out.X`; an input, a file or a save_output for `ctx.X`), checked now.
 */
function outputTemplate(
  def: HatcheryDef,
  file: string,
  graph: HatcheryGraph,
  problems: ValidationProblem[],
): Template | undefined {
  let t: Template;
  try {
    t = new Template(def.output!, { file, field: 'output' });
  } catch (err) {
    problems.push({ path: 'output', message: (err as HatcheryError).message });
    return undefined;
  }
  const refs = templateRefs(def.output!, undefined, t.takeTree());
  if (!Array.isArray(refs)) return t;
  const saved = def.nodes.map((n) => (n as { save_output?: string }).save_output);
  const ctxNames = ['input', ...Object.keys(def.inputs ?? {}), ...Object.keys(def.files ?? {}), ...saved];
  for (const r of refs) {
    if (r.soft) continue;
    const known = r.kind === 'out' ? [...graph.names] : r.kind === 'ctx' ? ctxNames : undefined;
    if (known === undefined || known.includes(r.name)) continue;
    problems.push({
      path: 'output',
      message: `${r.expr} (line ${r.line}, column ${r.column} of the template) is never set: ${r.kind === 'out' ? 'no node has that name' : 'no input, files entry or save_output has that name'}${didYouMean(
        r.name,
        known.filter((k): k is string => typeof k === 'string'),
      )}`,
    });
  }
  return t;
}

/** Load-time checks of top-level fields: the `model` and `client_fallback` provider prefixes, constant `files` paths. */
function checkTopLevel(
  def: HatcheryDef,
  dir: string,
  roots: LoadRoots | undefined,
  problems: ValidationProblem[],
): void {
  // A file whose drones name their own base_url may use a server's ids with a colon (llama3:8b) as its model.
  const ownServer = def.nodes.some((n) => typeof (n as { base_url?: unknown }).base_url === 'string');
  const why = def.model === undefined || ownServer ? undefined : modelSpecProblem(def.model);
  if (why) problems.push({ path: 'model', message: why });
  const fallbackWhy =
    def.client_fallback === undefined ? undefined : clientFallbackProblem(def.client_fallback);
  if (fallbackWhy) problems.push({ path: 'client_fallback', message: fallbackWhy });
  problems.push(...serverCwdProblems(def.mcpServers, dir));
  if (!roots) return;
  for (const [key, rel] of Object.entries(def.files ?? {})) {
    const outside = readPathProblem(rel, dir, roots);
    if (outside) problems.push({ path: `files/${key}`, message: outside });
  }
}

/** Builds the runnable hatchery from a validated definition; problems found here are added to `problems`. */
export function compileHatchery(
  file: string,
  def: HatcheryDef,
  nodes: ValidNode[],
  options: LoadOptions,
  problems: ValidationProblem[],
  subs?: SubFiles,
  /** The graph of `nodes`, when the caller built it already. */
  built?: HatcheryGraph,
): Hatchery | undefined {
  const dir = file ? path.dirname(file) : process.cwd();
  const graph = built ?? new HatcheryGraph(def.start, nodes);
  const dependencies = new Set<string>();
  const mcpServers = { ...(options.mcpServers ?? {}), ...(def.mcpServers ?? {}) };
  const compiled = new Map<string, CompiledNode>();
  // Without roots (a definition loaded apart from any Runtime) where it will run is unknown: not checked.
  const roots = options.roots;
  const templates: TemplateUse[] = [];
  nodes.forEach((n, position) => {
    const prefix = `nodes/${n.index}`;
    const cc: CompileContext = {
      file,
      dir,
      def,
      graph,
      options,
      mcpServers,
      template(source, field) {
        try {
          const t = new Template(source, { file, node: n.name, field });
          templates.push(usedTemplate(position, field, source, t.takeTree()));
          return t;
        } catch (err) {
          // The message says where in the template; the problem's line and column are the field's place
          // in the file, which positions.ts finds from the path.
          problems.push({ path: `${prefix}/${field}`, message: (err as HatcheryError).message });
          return undefined;
        }
      },
      problem(field, message, fix) {
        problems.push({ path: field ? `${prefix}/${field}` : prefix, message, ...(fix ? { fix } : {}) });
      },
      dependency(abs) {
        dependencies.add(abs);
      },
      hatchery: subs
        ? (rel, report) => {
            const sub = subs.check(rel, dir, report);
            // The sub-file's own sub-files decide this file's validity too: hot reload watches them.
            for (const f of subs.below(path.resolve(dir, rel))) dependencies.add(f);
            return sub;
          }
        : undefined,
    };
    const d = n.def as Record<string, unknown> & {
      next?: string | string[];
      save_output?: string;
      write_output?: string;
      max_visits?: number;
      on_limit?: string;
    };
    const base: NodeBase = {
      name: n.name,
      kind: n.kind,
      index: n.index,
      route: compileRouter(d.next),
      saveOutput: d.save_output,
      writeOutput: d.write_output === undefined ? undefined : cc.template(d.write_output, 'write_output'),
      maxVisits: d.max_visits,
      onLimit: d.on_limit,
    };
    if (d.write_output !== undefined && roots) {
      const why = writePathProblem(d.write_output, dir, roots);
      if (why) cc.problem('write_output', why);
    }
    const impl = NODE_IMPLS[n.kind] as {
      compile(def: unknown, base: NodeBase, cc: CompileContext): CompiledNode;
    };
    compiled.set(n.name, impl.compile(n.def, base, cc));
  });
  // A file already known to be broken (its rest checked in the same pass) may trip the analysis over
  // what is missing: what it found until then stays reported.
  const broken = problems.some(isError);
  let inputRequired = false;
  try {
    inputRequired = analyzeHatchery(def, nodes, graph, templates, problems).inputRequired;
  } catch (err) {
    if (!broken) throw err;
  }
  for (const rel of Object.values(def.files ?? {})) dependencies.add(path.resolve(dir, rel));
  checkTopLevel(def, dir, roots, problems);
  const output = def.output === undefined ? undefined : outputTemplate(def, file, graph, problems);
  if (problems.some(isError)) return undefined;
  const first = nodes[0];
  if (!first) throw new HatcheryError('INVALID_FILE', 'no nodes', { file });
  return {
    name: def.name,
    desc: def.desc,
    file,
    dir,
    start: def.start ?? first.name,
    // No prototype: `name in inputs` and `inputs[name]` see declared names only, never "constructor".
    inputs: Object.assign(Object.create(null), def.inputs),
    files: Object.assign(Object.create(null), def.files),
    model: def.model,
    maxSteps: def.max_steps,
    maxDepth: def.max_depth,
    nodes: linked(compiled),
    def,
    // The result is the output template's text then, whatever schema the last node has.
    outputSchema: def.output === undefined ? graph.finalOutputSchema : undefined,
    output,
    inputRequired,
    dependencies: [...dependencies],
    warnings: problems.filter((p) => !isError(p)),
  };
}
