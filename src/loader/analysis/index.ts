/**
 * Load-time analysis of a whole file: template variables against the run structure, graph checks,
 * and whether the hatchery needs `input`. Runs at every load, in about linear time in the nodes.
 */
import type { ValidationProblem } from '../../core/errors.js';
import { Dataflow, type RenderPoint } from './dataflow.js';
import { Flow, type FlowNode } from './flow.js';
import { graphChecks } from './graph-checks.js';
import { type TemplateRef, templateRefs } from './template-refs.js';
import { VarChecks } from './var-checks.js';

/** One template field of one node, as compiled (its source is parsed again here, once). */
export interface TemplateUse {
  /** Position of the node in the validated node list. */
  readonly node: number;
  /** JSON path below the node: `usr_prompt`, `tool_args/query`, `spawn/templates/0/sys_prompt`. */
  readonly field: string;
  readonly source: string;
}

/** What the analysis of a file found besides its problems. */
export interface Analysis {
  /** True when some run from the start node reads ctx.input without a default. */
  readonly inputRequired: boolean;
}

const TAG = /\{\{|\{%/;
const SPAWN_SYS = /^spawn\/templates\/\d+\/sys_prompt$/;
const BRANCHES: ReadonlySet<string> = new Set(['branches']);
const TASK: ReadonlySet<string> = new Set(['task']);
const NO_EXTRAS: ReadonlySet<string> = new Set();

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
  const ctxNames = new Set(['input', 'item', 'index', 'iteration']);
  const outNames = new Set<string>();
  for (const use of templates) {
    if (!TAG.test(use.source)) continue;
    const refs = templateRefs(use.source, renderPoint(use.field).extras);
    // A syntax error was already reported when the template compiled.
    if (!Array.isArray(refs)) continue;
    if (refs.length === 0) continue;
    parsed.push({ use, refs });
    for (const r of refs) {
      if (r.kind === 'ctx') ctxNames.add(r.name);
      else if (r.kind === 'out') outNames.add(r.name);
    }
  }
  const df = new Dataflow(flow, ctxNames, outNames);
  df.run();
  const checks = new VarChecks(
    flow,
    df,
    { inputs: Object.keys(file.inputs ?? {}), files: Object.keys(file.files ?? {}) },
    found,
  );
  let inputRequired = false;
  const inputBit = df.bit('ctx', 'input');
  const declaredInput = Object.hasOwn(file.inputs ?? {}, 'input');
  for (const { use, refs } of parsed) {
    const state = df.stateAt(use.node, renderPoint(use.field).point);
    if (!state) continue;
    checks.check(use.node, use.field, refs, state);
    if (!inputRequired && !declaredInput)
      inputRequired = refs.some(
        (r) =>
          r.kind === 'ctx' && r.name === 'input' && !r.soft && Dataflow.presence(state, inputBit) !== 'all',
      );
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
