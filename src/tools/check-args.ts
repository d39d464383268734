import type { ValidationProblem } from '../core/errors.js';
import type { Hatchery, ToolRef } from '../engine/contracts.js';
import { hasTemplateTags } from '../engine/templates/templates.js';
import { didYouMean, listNames, quote } from '../schema/suggest.js';
import { toolRefFields } from '../schema/tool-refs.js';
import { BUILTIN_TOOLS, shellExecTool } from './builtin/index.js';
import { hatchTool, nodeTool } from './nested.js';
import { parseToolRef } from './refs.js';

/** A value as written in JSON, cut to a readable length: strings quoted, numbers and objects as JSON. */
function shown(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  const json = JSON.stringify(v) ?? String(v);
  return json.length > 60 ? `${json.slice(0, 60)}…` : json;
}

/** The JSON type of a constant argument, as JSON Schema names it. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** True when the `type` of a schema (one name or a list) accepts a value of JSON type `t`. */
function typeAccepts(type: unknown, t: string): boolean {
  const types = Array.isArray(type) ? type : [type];
  return types.some((x) => x === t || (x === 'number' && t === 'integer'));
}

/** One problem of a tool call's arguments, at a path below `tool_args`. */
export interface ArgProblem {
  /** Below tool_args: '' for the object itself, else `key` or `key/0/sub`. */
  path: string;
  message: string;
}

type Schema = Record<string, unknown>;

const join = (base: string, key: string | number) => (base ? `${base}/${key}` : String(key));

/**
 * Checks constant tool arguments against a JSON Schema subset (type, required, properties,
 * additionalProperties, enum, items). A string with template tags has a type only when rendered:
 * one that is a single expression keeps its value's type and is skipped; other templated text is a
 * string whose value (enum) is unknown. `tool` names the tool in messages; problems go to `out`.
 */
function walk(value: unknown, schema: Schema, tool: string, at: string, out: ArgProblem[]): void {
  const templated = typeof value === 'string' && hasTemplateTags(value);
  if (templated && singleExpression(value as string) !== undefined) return;
  const t = jsonType(value);
  if (schema.type !== undefined && !typeAccepts(schema.type, t)) {
    const want = Array.isArray(schema.type) ? schema.type.join(' or ') : String(schema.type);
    out.push({
      path: at,
      message: `${at ? `argument "${at.replace(/\//g, '.')}"` : 'the arguments'} of ${tool} must be ${article(want)}, not ${article(t === 'integer' ? 'number' : t)} (${shown(value)})`,
    });
    return;
  }
  if (Array.isArray(schema.enum) && !templated && !schema.enum.some((e) => e === value)) {
    const allowed = schema.enum.map((e) => JSON.stringify(e));
    const near =
      typeof value === 'string'
        ? didYouMean(
            value,
            schema.enum.filter((e) => typeof e === 'string'),
          )
        : '';
    out.push({
      path: at,
      message: `argument "${at.replace(/\//g, '.')}" of ${tool} is ${shown(value)}${near}; allowed: ${listNames(allowed)}`,
    });
    return;
  }
  if (t === 'array' && isSchema(schema.items)) {
    const items = schema.items as Schema;
    (value as unknown[]).forEach((v, i) => {
      walk(v, items, tool, join(at, i), out);
    });
  }
  if (t === 'object') checkObject(value as Record<string, unknown>, schema, tool, at, out);
}

function checkObject(
  obj: Record<string, unknown>,
  schema: Schema,
  tool: string,
  at: string,
  out: ArgProblem[],
): void {
  const props = isSchema(schema.properties) ? (schema.properties as Record<string, unknown>) : undefined;
  const names = props ? Object.keys(props) : [];
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const missing = required.filter((k) => !Object.hasOwn(obj, k));
  const what = at ? `argument "${at.replace(/\//g, '.')}"` : tool;
  if (missing.length) {
    out.push({
      path: at,
      message: `${what} needs ${missing.length > 1 ? 'arguments' : 'argument'} ${missing.map((k) => quote(k)).join(', ')}${at ? '' : ` (arguments of ${tool}: ${listNames(names) || 'none'})`}`,
    });
  }
  const extra = schema.additionalProperties;
  for (const [k, v] of Object.entries(obj)) {
    const sub = props && Object.hasOwn(props, k) ? props[k] : undefined;
    if (isSchema(sub)) {
      walk(v, sub as Schema, tool, join(at, k), out);
      continue;
    }
    if (sub !== undefined) continue;
    if (isSchema(extra)) {
      walk(v, extra as Schema, tool, join(at, k), out);
      continue;
    }
    // Without a closed schema only a known property list makes an unknown name a mistake.
    if (extra === true || (extra === undefined && !props)) continue;
    out.push({
      path: join(at, k),
      message: `${tool} has no argument ${quote(k)}${didYouMean(k, names)}${at ? ` in "${at.replace(/\//g, '.')}"` : ''}; its arguments: ${listNames(names) || 'none'}`,
    });
  }
}

function isSchema(v: unknown): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function article(t: string): string {
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/**
 * The expression inside a string that is exactly one `{{ ... }}` tag (whitespace control allowed),
 * whose rendered value keeps its JSON type in tool_args, or undefined. The inner text must not open
 * or close another tag.
 */
export function singleExpression(s: string): string | undefined {
  const m = /^\{\{-?([\s\S]*?)-?\}\}$/.exec(s);
  if (!m) return undefined;
  const inner = m[1]!;
  if (/\{\{|\}\}|\{%|%\}|\{#|#\}/.test(inner) || inner.trim() === '') return undefined;
  return inner.trim();
}

/**
 * The input schema of a tool when it is known without starting or importing anything: built-ins,
 * node: tools, and hatch: tools whose file was loaded at load time. mcp: schemas come from the
 * server (validate --connect); js: schemas from importing the module, which a load never does.
 */
export function loadTimeSchema(ref: ToolRef, sub: Hatchery | undefined): Record<string, unknown> | undefined {
  switch (ref.kind) {
    case 'builtin':
      return ref.name === shellExecTool.name
        ? shellExecTool.inputSchema
        : BUILTIN_TOOLS.get(ref.name)?.inputSchema;
    case 'node':
      return nodeTool(ref.ref, ref.node).inputSchema;
    case 'hatch':
      return sub ? hatchTool(ref.ref, sub).inputSchema : undefined;
    default:
      return undefined;
  }
}

/**
 * Checks a baneling's `tool_args` against a tool's schema. `input_str` (the original Hatchery's
 * name of `input`) stands in for `input` of hatch: and node: tools.
 */
export function checkToolArgs(ref: ToolRef, args: unknown, schema: Record<string, unknown>): ArgProblem[] {
  let value = args;
  if (
    (ref.kind === 'hatch' || ref.kind === 'node') &&
    value &&
    typeof value === 'object' &&
    !Array.isArray(value)
  ) {
    const o = value as Record<string, unknown>;
    if (Object.hasOwn(o, 'input_str') && !Object.hasOwn(o, 'input')) {
      const { input_str, ...rest } = o;
      value = { input: input_str, ...rest };
    }
  }
  const problems: ArgProblem[] = [];
  walk(value, schema, ref.ref, '', problems);
  return problems;
}

/** One reference of one kind in a loaded hatchery's nodes (for `validate --connect`). */
export interface RefUse<K extends ToolRef['kind']> {
  ref: Extract<ToolRef, { kind: K }>;
  /** JSON path of the reference. */
  field: string;
  /** A baneling's tool_args, checked against the tool's schema; a drone's model picks its own. */
  args?: { value: unknown; field: string };
}

/** Every reference of kind `kind` the nodes of a loaded hatchery write, in node order. */
export function refUses<K extends ToolRef['kind']>(h: Hatchery, kind: K): RefUse<K>[] {
  const uses: RefUse<K>[] = [];
  for (const node of h.nodes.values()) {
    const d = h.def.nodes[node.index] as Record<string, unknown>;
    const at = `nodes/${node.index}`;
    for (const { ref, field } of toolRefFields(node.kind, d)) {
      const parsed = parseToolRef(ref);
      if ('error' in parsed || parsed.kind !== kind) continue;
      const args = field === 'tool_name' ? { value: d.tool_args ?? {}, field: `${at}/tool_args` } : undefined;
      uses.push({ ref: parsed as Extract<ToolRef, { kind: K }>, field: `${at}/${field}`, args });
    }
  }
  return uses;
}

/** The problems of a use's tool_args against the tool's schema, at their paths in the file. */
export function useArgProblems(
  u: { ref: ToolRef; args?: RefUse<'js'>['args'] },
  schema: Schema,
): ValidationProblem[] {
  if (!u.args) return [];
  const at = u.args.field;
  return checkToolArgs(u.ref, u.args.value, schema).map((p) => ({
    path: p.path ? `${at}/${p.path}` : at,
    message: p.message,
  }));
}
