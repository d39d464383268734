/**
 * The checks of a validated definition that need no schema: node names (generated for nameless
 * nodes), `start`, `next` and `on_limit` targets, and reserved variable names. validate.ts runs them
 * after the schemas.
 */
import type { ValidationProblem } from '../core/errors.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import { END, RESERVED_SAVE_NAMES, RESERVED_VAR_NAMES } from '../schema/names.js';
import { NODE_KINDS, type NodeKind } from '../schema/nodes.js';
import { listNames, quote, didYouMean as suggestion } from '../schema/suggest.js';
import { segment } from './limits.js';

/** A node after validation: its kind, its definition and its (possibly generated) name. */
export interface ValidNode {
  kind: NodeKind;
  name: string;
  index: number;
  def: Record<string, unknown> & { name?: string; next?: string | string[] };
}

/** Problems of one file that get a "did you mean": only the first are shown, and each costs a search. */
const SUGGESTIONS = 50;
let suggestionsLeft = SUGGESTIONS;

/** Starts a file's count of "did you mean" suggestions. */
export function resetSuggestions(): void {
  suggestionsLeft = SUGGESTIONS;
}

/** A "did you mean" for `word`, while the file's count of suggestions lasts. */
export function didYouMean(word: string, candidates: readonly string[] | ReadonlySet<string>): string {
  return suggestionsLeft-- > 0 ? suggestion(word, candidates) : '';
}

/** A problem path of segments (empty ones left out). */
export function join(...parts: (string | number)[]): string {
  return parts
    .filter((p) => p !== '')
    .map(segment)
    .join('/');
}

/** Names nameless nodes and checks names, `start`, `next` and `on_limit` targets and inputs. */
export function checkGraph(
  top: Partial<HatcheryDef>,
  rawNodes: unknown[],
  nodes: ValidNode[],
  problems: ValidationProblem[],
): void {
  // Names come from the raw nodes, so a node that failed validation still counts as a target.
  const names = new Set<string>();
  const rawName = (n: unknown) => (n && typeof n === 'object' ? (n as { name?: unknown }).name : undefined);
  rawNodes.forEach((n, index) => {
    const name = rawName(n);
    if (typeof name !== 'string') return;
    if (names.has(name)) {
      problems.push({
        path: `nodes/${index}/name`,
        message: `duplicate node name ${quote(name)}; node names must be unique`,
      });
    }
    names.add(name);
  });
  const generated = new Map<number, string>();
  rawNodes.forEach((n, index) => {
    if (typeof rawName(n) === 'string') return;
    let i = index + 1;
    while (names.has(`node_${i}`)) i += rawNodes.length;
    generated.set(index, `node_${i}`);
    names.add(`node_${i}`);
  });
  for (const n of nodes) {
    if (n.name) continue;
    n.name = generated.get(n.index)!;
    n.def = { ...n.def, name: n.name };
  }
  const target = (t: string, path: string) => {
    if (t === END || names.has(t)) return;
    problems.push({
      path,
      message: `no node named ${quote(t)}${didYouMean(t, names)}; nodes: ${listNames(names)}`,
    });
  };
  if (typeof top.start === 'string') {
    if (top.start === END) problems.push({ path: 'start', message: 'start cannot be END' });
    else target(top.start, 'start');
  }
  for (const n of nodes) {
    const next = n.def.next;
    if (typeof next === 'string') target(next, `nodes/${n.index}/next`);
    else if (Array.isArray(next)) {
      next.forEach((t, i) => {
        target(t, `nodes/${n.index}/next/${i}`);
      });
    }
    const onLimit = n.def.on_limit;
    if (typeof onLimit === 'string') target(onLimit, `nodes/${n.index}/on_limit`);
    // A loop node's on_limit also takes effect at max_iterations, so it needs no max_visits.
    if (onLimit !== undefined && n.def.max_visits === undefined && !NODE_KINDS[n.kind].ownLimit) {
      problems.push({
        path: `nodes/${n.index}/on_limit`,
        message: 'on_limit needs max_visits on the same node',
      });
    }
  }
  checkVarNames(top, nodes, problems);
}

/** Declared inputs, `files` entries and `save_output` names become ctx keys: reserved names are refused. */
function checkVarNames(top: Partial<HatcheryDef>, nodes: ValidNode[], problems: ValidationProblem[]): void {
  const reserved = (names: ReadonlyMap<string, string>, name: string, path: string, fix: string) => {
    const why = names.get(name);
    if (why) problems.push({ path, message: `"${name}" ${why}; ${fix}` });
    return why !== undefined;
  };
  const inputs = top.inputs && typeof top.inputs === 'object' ? Object.keys(top.inputs) : [];
  for (const name of inputs)
    reserved(RESERVED_VAR_NAMES, name, join('inputs', name), 'give the declared input another name');
  const files = top.files && typeof top.files === 'object' ? Object.keys(top.files) : [];
  for (const name of files) {
    const path = join('files', name);
    if (
      !reserved(RESERVED_VAR_NAMES, name, path, 'give the file variable another name') &&
      inputs.includes(name)
    )
      problems.push({
        path,
        message: `${quote(name)} is also a declared input; the file would overwrite it, so give one of them another name`,
      });
  }
  for (const n of nodes) {
    const save = n.def.save_output;
    if (typeof save === 'string')
      reserved(
        RESERVED_SAVE_NAMES,
        save,
        `nodes/${n.index}/save_output`,
        'save the output under another name',
      );
  }
}
