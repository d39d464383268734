/**
 * Load-time analysis of a whole file: template variables against the run structure, graph checks,
 * and whether the hatchery needs `input`. Runs at every load, in about linear time in the nodes.
 */
import type { ValidationProblem } from '../../core/errors.js';
import type { HatcheryGraph } from '../../engine/graph.js';
import { hasTemplateTags } from '../../engine/templates/templates.js';
import { kindSpec } from '../../schema/nodes.js';
import { quote } from '../../schema/suggest.js';
import { addUnique } from '../limits.js';
import type { Presence } from './bitset.js';
import { Dataflow, type RenderPoint } from './dataflow.js';
import { Flow, type FlowNode } from './flow.js';
import { graphChecks } from './graph-checks.js';
import { type Region, regionOf, regionWiring } from './region.js';
import { type TemplateRef, templateRefs } from './template-refs.js';
import { VarChecks } from './var-checks.js';

/** One template field of one node, as compiled, with the variables it reads (see usedTemplate). */
export interface TemplateUse {
  /** Position of the node in the validated node list. */
  readonly node: number;
  /** JSON path below the node: `usr_prompt`, `tool_args/query`, `spawn/templates/0/sys_prompt`. */
  readonly field: string;
  readonly source: string;
  /** The variables it reads; none for text without tags, and for a syntax error (reported already). */
  readonly refs: readonly TemplateRef[];
}

const NO_REFS: readonly TemplateRef[] = [];

/**
 * The use of a template field, read right when the field compiles: `tree` is the parse tree of that
 * step (Template.takeTree), so the template is not parsed again. Keeping refs instead of trees until
 * the whole file is analysed lets every tree die young: with all of a large file's trees alive at
 * once, the GC promoted and marked them, about a third of loading a 10,000-node file.
 */
export function usedTemplate(node: number, field: string, source: string, tree: unknown): TemplateUse {
  if (!hasTemplateTags(source)) return { node, field, source, refs: NO_REFS };
  const refs = templateRefs(source, renderPoint(field).extras, tree);
  return { node, field, source, refs: Array.isArray(refs) ? refs : NO_REFS };
}

/** What the analysis of a file found besides its problems. */
export interface Analysis {
  /** True when some run from the start node reads ctx.input without a default. */
  readonly inputRequired: boolean;
}

/** ctx names the run structure sets (map, loop, node: tools), analysed in every slice. */
const FIXED_CTX = ['input', 'item', 'index', 'iteration'];
const FIXED: ReadonlySet<string> = new Set(FIXED_CTX.map((n) => `ctx:${n}`));
/** Most bits of one state array (nodes x variables) before variables are analysed in slices. */
const BIT_BUDGET = 1 << 24;
const SPAWN_SYS = /^spawn\/templates\/\d+\/sys_prompt$/;
const BRANCHES: ReadonlySet<string> = new Set(['branches']);
const TASK: ReadonlySet<string> = new Set(['task']);
const NO_EXTRAS: ReadonlySet<string> = new Set();
const NO_INDEXES: readonly number[] = [];

/**
 * From how many nodes a file's variables are analysed in small slices over the nodes that need them
 * (see region.ts), and how many variables a slice holds. Tests lower them to check that this gives
 * the same problems as one full run.
 */
export const tuning = { regionNodes: 512, sliceVars: 256 };

/** Appends `v` to the list `lists[k]`, made on first use. */
function push(lists: (number[] | undefined)[], k: number, v: number): void {
  const list = lists[k];
  if (list) list.push(v);
  else lists[k] = [v];
}

/** Where a field renders and which extra names the node kind gives it. */
function renderPoint(field: string): { point: RenderPoint; extras: ReadonlySet<string> } {
  if (field === 'write_output') return { point: 'out', extras: NO_EXTRAS };
  if (field === 'join') return { point: 'after-chains', extras: BRANCHES };
  if (field === 'until') return { point: 'after-chains', extras: NO_EXTRAS };
  return { point: 'in', extras: SPAWN_SYS.test(field) ? TASK : NO_EXTRAS };
}

/** Analyses a validated file (`graph` built from `nodes`); problems (errors and warnings) are added to `problems`. */
export function analyzeHatchery(
  file: { start?: string; inputs?: Record<string, string>; files?: Record<string, string> },
  nodes: readonly FlowNode[],
  graph: HatcheryGraph,
  templates: readonly TemplateUse[],
  problems: ValidationProblem[],
): Analysis {
  const flow = new Flow(nodes, file.start, graph);
  const found: ValidationProblem[] = [];
  graphChecks(flow, found);
  const parsed = templates.filter((t) => t.refs.length > 0);
  // Each variable a template reads gets a bit; ctx names of the run structure are in every slice.
  const slice = new Map<string, number>();
  const vars: string[] = [];
  for (const { refs } of parsed) {
    for (const r of refs) {
      const key = `${r.kind}:${r.name}`;
      if (r.kind === 'bare' || FIXED.has(key) || slice.has(key)) continue;
      slice.set(key, -1);
      vars.push(key);
    }
  }
  // A drone continuing another's conversation needs that drone to have run: its out.<name> is set.
  const conversations: { node: number; target: string }[] = [];
  flow.nodes.forEach((n, i) => {
    const t = n.def.conversation;
    if (n.kind !== 'drone' || typeof t !== 'string' || flow.nodes[flow.index.get(t) ?? -1]?.kind !== 'drone')
      return;
    conversations.push({ node: i, target: t });
    if (!slice.has(`out:${t}`)) {
      slice.set(`out:${t}`, -1);
      vars.push(`out:${t}`);
    }
  });
  const always = { inputs: Object.keys(file.inputs ?? {}), files: Object.keys(file.files ?? {}) };
  const declaredInput = Object.hasOwn(file.inputs ?? {}, 'input');
  // What the dataflow says of each ref (by template, by ref) and of each conversation target;
  // problems are reported afterwards, in file order, however the variables were sliced.
  const presence: (Presence | undefined)[][] = parsed.map(() => []);
  const reached = new Uint8Array(parsed.length);
  const talks: Presence[] = [];
  const n = flow.nodes.length;
  const regions = n >= tuning.regionNodes;
  // Bitsets cost nodes x variables bits. Huge files: the structure's own names over every node, then
  // small slices of variables, each over the nodes between its setters and its readers only (linear
  // in a chain, where each variable lives a few nodes). Others: slices over every node that keep
  // memory bounded (one slice but for files of thousands of nodes).
  const per = regions ? tuning.sliceVars : Math.max(256, Math.floor(BIT_BUDGET / Math.max(1, n)));
  const first0 = regions ? 0 : Math.min(per, vars.length);
  const slices = 1 + Math.ceil((vars.length - first0) / per);
  const sliceOf = (k: number) => (k < first0 ? 0 : 1 + Math.floor((k - first0) / per));
  vars.forEach((v, k) => {
    slice.set(v, sliceOf(k));
  });
  // Each template's refs by slice, split once: filtering every template's refs in every slice made
  // huge files quadratic (and most templates read variables of one slice only).
  const split: (number[] | undefined)[][] = [];
  // Per slice: the nodes that read its variables, and the templates (by position in `parsed`).
  const readers: (number[] | undefined)[] = [];
  const users: (number[] | undefined)[] = [];
  parsed.forEach((use, k) => {
    const by: (number[] | undefined)[] = [];
    use.refs.forEach((r, j) => {
      if (r.kind === 'bare') return;
      const si = slice.get(`${r.kind}:${r.name}`) ?? 0;
      if (!by[si]) {
        push(readers, si, use.node);
        push(users, si, k);
      }
      push(by, si, j);
    });
    split.push(by);
  });
  // Per slice: the conversations whose target's output it holds.
  const talkers: (number[] | undefined)[] = [];
  conversations.forEach((c, k) => {
    const si = slice.get(`out:${c.target}`) ?? 0;
    push(readers, si, c.node);
    push(talkers, si, k);
  });
  let inputRequired = false;
  let full: { inReached: Uint8Array; outReached: Uint8Array } | undefined;
  const wiring = regions ? regionWiring(flow) : undefined;
  for (let si = 0; si < slices; si++) {
    const names = si === 0 ? vars.slice(0, first0) : vars.slice(first0 + (si - 1) * per, first0 + si * per);
    const ctxNames = [
      ...(si === 0 ? FIXED_CTX : []),
      ...names.filter((v) => v.startsWith('ctx:')).map((v) => v.slice(4)),
    ];
    const outNames = names.filter((v) => v.startsWith('out:')).map((v) => v.slice(4));
    let region: Region | undefined;
    if (si > 0 && regions) {
      if (!readers[si]) continue;
      region = regionOf(flow, full!, wiring!, names, readers[si]!);
    }
    const df = new Dataflow(flow, ctxNames, outNames, region);
    df.run();
    if (si === 0 && regions) full = df.reached();
    const inputBit = df.bit('ctx', 'input');
    for (const k of talkers[si] ?? NO_INDEXES) {
      const c = conversations[k]!;
      const state = df.stateAt(c.node, 'in');
      talks[k] = state ? Dataflow.presence(state, df.bit('out', c.target)) : 'all';
    }
    // Slice 0 looks at every template (which are reached, does the run need `input`); others at their own.
    const mine0 = si === 0 ? parsed.map((_, k) => k) : (users[si] ?? NO_INDEXES);
    for (const k of mine0) {
      const use = parsed[k]!;
      const refs = use.refs;
      const mine = split[k]![si];
      const inputOpen = si === 0 && !inputRequired && !declaredInput;
      if (!mine && !inputOpen && si > 0) continue;
      const state = df.stateAt(use.node, renderPoint(use.field).point);
      if (!state) continue;
      if (si === 0) reached[k] = 1;
      const has = presence[k]!;
      for (const j of mine ?? NO_INDEXES) {
        const r = refs[j]!;
        has[j] = Dataflow.presence(state, df.bit(r.kind === 'out' ? 'out' : 'ctx', r.name));
      }
      if (inputOpen)
        inputRequired = refs.some(
          (r) =>
            r.kind === 'ctx' && r.name === 'input' && !r.soft && Dataflow.presence(state, inputBit) !== 'all',
        );
    }
  }
  conversations.forEach((c, k) => {
    const has = talks[k] ?? 'all';
    if (has === 'all') return;
    const n = flow.nodes[c.node]!;
    found.push({
      path: `nodes/${n.index}/conversation`,
      severity: 'warning',
      message: `${quote(n.name)} continues the conversation of ${quote(c.target)}, which ${has === 'none' ? 'never runs' : 'does not always run'} before it: the run fails there with "no history yet"`,
      fix: `route ${quote(c.target)} before ${quote(n.name)}`,
    });
  });
  const checks = new VarChecks(flow, always, found);
  parsed.forEach((use, k) => {
    if (reached[k]) checks.check(use.node, use.field, use.refs, presence[k]!);
  });
  // A node that starts the run may read its input itself (a script with no stdin of its own).
  const first = flow.nodes[flow.start];
  if (first && kindSpec(first.kind)?.readsInput(first.def)) inputRequired = true;
  addUnique(problems, found);
  return { inputRequired };
}
