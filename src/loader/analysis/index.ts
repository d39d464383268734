/**
 * Load-time analysis of a whole file: template variables against the run structure, graph checks,
 * and whether the hatchery needs `input`. Runs at every load, in about linear time in the nodes.
 */
import type { ValidationProblem } from '../../core/errors.js';
import { hasTemplateTags } from '../../engine/templates/templates.js';
import { quote } from '../../schema/suggest.js';
import { Dataflow, type RenderPoint } from './dataflow.js';
import { Flow, type FlowNode } from './flow.js';
import { graphChecks } from './graph-checks.js';
import { type TemplateRef, templateRefs } from './template-refs.js';
import { VarChecks } from './var-checks.js';

/** One template field of one node, as compiled (with the parse tree of its compile step). */
export interface TemplateUse {
  /** Position of the node in the validated node list. */
  readonly node: number;
  /** JSON path below the node: `usr_prompt`, `tool_args/query`, `spawn/templates/0/sys_prompt`. */
  readonly field: string;
  readonly source: string;
  /** Its parse tree when the compile step parsed it already (then it is not parsed again here). */
  readonly tree?: unknown;
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
const NO_REFS: readonly TemplateRef[] = [];

/** Where a field renders and which extra names the node kind gives it. */
function renderPoint(field: string): { point: RenderPoint; extras: ReadonlySet<string> } {
  if (field === 'write_output') return { point: 'out', extras: NO_EXTRAS };
  if (field === 'join') return { point: 'after-chains', extras: BRANCHES };
  if (field === 'until') return { point: 'after-chains', extras: NO_EXTRAS };
  return { point: 'in', extras: SPAWN_SYS.test(field) ? TASK : NO_EXTRAS };
}

/** Analyses a validated file; problems (errors and warnings) are added to `problems`. */
export function analyzeHatchery(
  file: { start?: string; inputs?: Record<string, string>; files?: Record<string, string> },
  nodes: readonly FlowNode[],
  templates: readonly TemplateUse[],
  problems: ValidationProblem[],
): Analysis {
  const flow = new Flow(nodes, file.start);
  const found: ValidationProblem[] = [];
  graphChecks(flow, found);
  const parsed: { use: TemplateUse; refs: readonly TemplateRef[] }[] = [];
  // Each variable a template reads gets a bit; ctx names of the run structure are in every slice.
  const slice = new Map<string, number>();
  const vars: string[] = [];
  for (const use of templates) {
    if (!hasTemplateTags(use.source)) continue;
    const refs = templateRefs(use.source, renderPoint(use.field).extras, use.tree);
    // A syntax error was already reported when the template compiled.
    if (!Array.isArray(refs)) continue;
    if (refs.length === 0) continue;
    parsed.push({ use, refs });
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
  // Bitsets cost nodes x variables bits: huge files are analysed a slice of variables at a time,
  // so memory stays bounded (the time is the same either way).
  const per = Math.max(256, Math.floor(BIT_BUDGET / Math.max(1, flow.nodes.length)));
  const slices = Math.max(1, Math.ceil(vars.length / per));
  vars.forEach((v, k) => {
    slice.set(v, Math.floor(k / per));
  });
  // Each template's refs by slice, split once: filtering every template's refs in every slice made
  // huge files quadratic (and most templates read variables of one slice only).
  const split: (TemplateRef[] | undefined)[][] = [];
  if (slices > 1)
    for (const { refs } of parsed) {
      const by: (TemplateRef[] | undefined)[] = [];
      for (const r of refs) {
        const si = slice.get(`${r.kind}:${r.name}`) ?? 0;
        const list = by[si];
        if (list) list.push(r);
        else by[si] = [r];
      }
      split.push(by);
    }
  const always = { inputs: Object.keys(file.inputs ?? {}), files: Object.keys(file.files ?? {}) };
  const declaredInput = Object.hasOwn(file.inputs ?? {}, 'input');
  let inputRequired = false;
  for (let si = 0; si < slices; si++) {
    const names = vars.slice(si * per, (si + 1) * per);
    const ctxNames = [...FIXED_CTX, ...names.filter((v) => v.startsWith('ctx:')).map((v) => v.slice(4))];
    const outNames = names.filter((v) => v.startsWith('out:')).map((v) => v.slice(4));
    const df = new Dataflow(flow, ctxNames, outNames);
    df.run();
    const checks = new VarChecks(flow, df, always, found);
    const inputBit = df.bit('ctx', 'input');
    for (const c of conversations) {
      if (slice.get(`out:${c.target}`) !== si) continue;
      const state = df.stateAt(c.node, 'in');
      const has = state ? Dataflow.presence(state, df.bit('out', c.target)) : 'all';
      if (has === 'all') continue;
      const n = flow.nodes[c.node]!;
      found.push({
        path: `nodes/${n.index}/conversation`,
        severity: 'warning',
        message: `${quote(n.name)} continues the conversation of ${quote(c.target)}, which ${has === 'none' ? 'never runs' : 'does not always run'} before it: the run fails there with "no history yet"`,
        fix: `route ${quote(c.target)} before ${quote(n.name)}`,
      });
    }
    for (let k = 0; k < parsed.length; k++) {
      const { use, refs } = parsed[k]!;
      const mine = slices === 1 ? refs : (split[k]![si] ?? NO_REFS);
      const inputOpen = si === 0 && !inputRequired && !declaredInput;
      if (mine.length === 0 && !inputOpen) continue;
      const state = df.stateAt(use.node, renderPoint(use.field).point);
      if (!state) continue;
      if (mine.length > 0) checks.check(use.node, use.field, mine, state);
      if (inputOpen)
        inputRequired = refs.some(
          (r) =>
            r.kind === 'ctx' && r.name === 'input' && !r.soft && Dataflow.presence(state, inputBit) !== 'all',
        );
    }
  }
  // A script node that starts the run with no stdin of its own reads the run's input.
  const first = flow.nodes[flow.start];
  if (first?.kind === 'script' && first.def.stdin === undefined) inputRequired = true;
  const keys = new Set(problems.map((p) => `${p.path}\n${p.message}`));
  for (const p of found) {
    const key = `${p.path}\n${p.message}`;
    if (keys.has(key)) continue;
    keys.add(key);
    problems.push(p);
  }
  return { inputRequired };
}
