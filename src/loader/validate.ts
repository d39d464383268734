import type { z } from 'zod';
import type { ValidationProblem } from '../core/errors.js';
import { type HatcheryDef, hatcheryTopSchema } from '../schema/hatchery.js';
import { describeIssues } from '../schema/issues.js';
import { hatcheryAliases } from '../schema/names.js';
import { DEFAULT_KIND, NODE_KINDS, type NodeKind, TYPE_TO_KIND } from '../schema/nodes.js';
import { quote } from '../schema/suggest.js';
import { DESIGN_TYPES } from './design.js';
import { checkGraph, didYouMean, join, resetSuggestions, type ValidNode } from './graph-check.js';
import { nestingProblem } from './limits.js';

export type { ValidNode } from './graph-check.js';

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
  resetSuggestions();
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
