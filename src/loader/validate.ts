/**
 * Validation of a parsed definition: each node against its kind's schema, then the checks that need
 * no schema (node names, generated for nameless nodes; `start`, `next` and `on_limit` targets;
 * reserved variable names).
 */
import type { z } from 'zod';
import type { ValidationProblem } from '../core/errors.js';
import { type HatcheryDef, hatcheryTopSchema } from '../schema/hatchery.js';
import { describeIssues } from '../schema/issues.js';
import { END, hatcheryAliases, RESERVED_SAVE_NAMES, RESERVED_VAR_NAMES } from '../schema/names.js';
import { DEFAULT_KIND, NODE_KINDS, type NodeKind, TYPE_TO_KIND } from '../schema/nodes.js';
import { listNames, quote, didYouMean as suggestion } from '../schema/suggest.js';
import { DESIGN_TYPES } from './design.js';
import { nestingProblem, segment } from './limits.js';

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

/** A "did you mean" for `word`, while the file's count of suggestions lasts. */
export function didYouMean(word: string, candidates: readonly string[] | ReadonlySet<string>): string {
  return suggestionsLeft-- > 0 ? suggestion(word, candidates) : '';
}

/** A problem path of segments (empty ones left out). */
function join(...parts: (string | number)[]): string {
  return parts
    .filter((p) => p !== '')
    .map(segment)
    .join('/');
}

/** Names nameless nodes and checks names, `start`, `next` and `on_limit` targets and inputs. */
function checkGraph(
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

/** The result of validating a hatchery definition: the definition when valid, and every problem. */
export interface Validated {
  def?: HatcheryDef;
  nodes: ValidNode[];
  problems: ValidationProblem[];
  /**
   * With problems: the definition of the nodes that are valid, when the top level is, so the rest of
   * the file (templates, tool arguments, models) can still be checked and reported in the same pass.
   */
  draft?: HatcheryDef;
}

// Free-form values (tool arguments, JSON Schemas, maps of user names) keep their `$`/`_` keys.
const FREE_FORM = new Set(['tool_args', 'output_schema', 'inputs', 'files', 'env', 'headers', 'input']);

/** Drops `$...`/`_...` keys (comments, `$schema`) from the structural objects of the format. */
export function stripMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripMeta);
  if (value === null || typeof value !== 'object') return value;
  // No prototype: a "__proto__" key stays a key (and is reported as unknown) instead of replacing it.
  const outObj: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$') || k.startsWith('_')) continue;
    outObj[k] = FREE_FORM.has(k) ? v : stripMeta(v);
  }
  return outObj;
}

/** Renames alias keys to their canonical names; both spellings at once is a problem. */
export function applyAliases(
  obj: Record<string, unknown>,
  aliases: Record<string, string>,
  path: string,
  problems: ValidationProblem[],
): { obj: Record<string, unknown>; renamed: Map<string, string> } {
  const renamed = new Map<string, string>();
  const result: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(obj)) {
    const canonical = Object.hasOwn(aliases, k) ? aliases[k] : undefined;
    if (canonical === undefined) {
      if (!Object.hasOwn(result, k)) result[k] = v;
      continue;
    }
    if (Object.hasOwn(obj, canonical) || renamed.has(canonical)) {
      const other = Object.hasOwn(obj, canonical) ? canonical : renamed.get(canonical);
      problems.push({ path: join(path, k), message: `"${k}" and "${other}" mean the same thing; keep one` });
      continue;
    }
    renamed.set(canonical, k);
    result[canonical] = v;
  }
  return { obj: result, renamed };
}

/** Converts zod issues to problems, with paths in the user's own spelling of aliased keys. */
function toProblems(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
  base: string,
  renamed: Map<string, string>,
  problems: ValidationProblem[],
): void {
  for (const { segs: raw, message } of describeIssues(issues, input, schema)) {
    const segs = raw.map((p) => (typeof p === 'symbol' ? String(p) : p));
    // Only the first segment can be an alias (of this object's own keys); unknown keys never are.
    if (typeof segs[0] === 'string' && renamed.has(segs[0])) segs[0] = renamed.get(segs[0])!;
    problems.push({ path: join(base, ...segs), message });
  }
}

/**
 * zod's interpreted object parser, not the one it generates per object schema with `new Function` on
 * its first parse: at start-up every schema's first parses run cold, and generating and compiling that
 * code cost more than it saved (loading 100 files took about 15% longer). Only the load's own parses.
 */
const LOAD_PARSE = { jitless: true } as const;

/** Validates a parsed hatchery definition; reports every problem at once with its JSON path. */
export function validateDefinition(raw: unknown): Validated {
  const problems: ValidationProblem[] = [];
  const nodes: ValidNode[] = [];
  suggestionsLeft = SUGGESTIONS;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({
      path: '',
      message: 'a hatchery file must be a JSON object with "name", "desc" and "nodes"',
    });
    return { nodes, problems };
  }
  // Checked first and without recursion: everything after this recurses into the value.
  const tooDeep = nestingProblem(raw);
  if (tooDeep) return { nodes, problems: [tooDeep] };
  const stripped = stripMeta(raw) as Record<string, unknown>;
  const { obj: top, renamed: topRenamed } = applyAliases(stripped, hatcheryAliases, '', problems);
  let topData: object | undefined;
  const topResult = hatcheryTopSchema.safeParse(top, LOAD_PARSE);
  if (topResult.success) topData = topResult.data;
  else toProblems(topResult.error.issues, top, hatcheryTopSchema, '', topRenamed, problems);

  const rawNodes = Array.isArray(top.nodes) ? top.nodes : [];
  rawNodes.forEach((rawNode, index) => {
    const path = join('nodes', index);
    if (rawNode === null || typeof rawNode !== 'object' || Array.isArray(rawNode)) {
      problems.push({ path, message: 'a node must be a JSON object' });
      return;
    }
    const n = rawNode as Record<string, unknown>;
    const type = n.type;
    let kind: NodeKind | undefined;
    if (type === undefined) kind = DEFAULT_KIND;
    else if (typeof type === 'string') kind = TYPE_TO_KIND.get(type);
    if (!kind) {
      const valid = [...TYPE_TO_KIND.keys()];
      // The YAML design's types are valid too (design.ts maps them): a near miss may be one of them.
      const near = typeof type === 'string' ? didYouMean(type, [...valid, ...DESIGN_TYPES]) : '';
      problems.push({
        path: join(path, 'type'),
        message: `unknown node type ${quote(type)}${near}; valid types: ${valid.join(', ')} (or no type for a drone), or a YAML design type (agent.completion, trigger.stdin, event.stdout, ...)`,
      });
      return;
    }
    const spec = NODE_KINDS[kind];
    const { obj, renamed } = applyAliases(n, spec.aliases, path, problems);
    const result = spec.schema.safeParse(obj, LOAD_PARSE);
    if (!result.success) {
      // Only for a node that is no drone at all: with a usr_prompt, a foreign key is more likely a typo.
      const other = type === undefined && obj.usr_prompt === undefined ? kindOfKeys(obj) : undefined;
      if (other) problems.push({ path, message: other });
      else toProblems(result.error.issues, obj, spec.schema, path, renamed, problems);
      return;
    }
    nodes.push({
      kind,
      index,
      name: (result.data as { name?: string }).name ?? '',
      def: result.data as ValidNode['def'],
    });
  });

  checkGraph(top as Partial<HatcheryDef>, rawNodes, nodes, problems);
  if (!topData) return { nodes, problems };
  const def = { ...topData, nodes: nodes.map((n) => n.def) } as HatcheryDef;
  return problems.length > 0 ? { nodes, problems, draft: def } : { def, nodes, problems };
}

/**
 * A node without `type` is a drone; when its keys that a drone does not take are all keys of one
 * other kind, the missing `type` is the one problem (not one unknown key each plus a missing usr_prompt).
 */
function kindOfKeys(obj: Record<string, unknown>): string | undefined {
  const takes = (k: NodeKind, key: string) =>
    Object.hasOwn(NODE_KINDS[k].schema.shape, key) || Object.hasOwn(NODE_KINDS[k].aliases, key);
  const foreign = Object.keys(obj).filter((key) => !takes(DEFAULT_KIND, key));
  if (foreign.length === 0) return undefined;
  const kinds = (Object.keys(NODE_KINDS) as NodeKind[]).filter(
    (k) => k !== DEFAULT_KIND && foreign.every((key) => takes(k, key)),
  );
  if (kinds.length !== 1) return undefined;
  const kind = NODE_KINDS[kinds[0]!];
  const keys = foreign.map((key) => quote(key)).join(', ');
  return `this node has no "type", so it is a drone, but ${keys} ${foreign.length > 1 ? 'are keys' : 'is a key'} of a ${kinds[0]} node; add "type": ${quote(kind.types[0])}`;
}
