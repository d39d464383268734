/**
 * A hand-written check of the common shapes of the file format, for start-up: validating a folder's
 * files with zod builds every schema they use and runs zod's parser cold, most of `serve`'s time to its
 * first answer after module loading. This check either gives EXACTLY what the zod parse gives (same
 * keys, in the schema's order, same values, new objects and arrays where zod makes new ones) or says
 * it cannot decide (`undefined`), and then zod runs as before, with its problems and messages.
 *
 * The zod schemas (hatchery.ts and the node kinds' files) stay the one source of truth of the format,
 * and the JSON Schema is generated from them. This file only mirrors them, conservatively: anything
 * unusual (a field it does not know, a URL, a budget, spawn, `__proto__` or `constructor` keys, a number
 * out of the safe range) is left to zod. test/schema/fast-check.test.ts runs both on every valid file
 * of the repo and on many mutations of them, and checks that this file's key lists equal the schemas'.
 */
import {
  BANELING_TYPES,
  DRONE_TYPES,
  END,
  ENV_NAME,
  IDENTIFIER,
  NODE_NAME,
  ON_ERROR,
  ROUTES,
  TOOL_NAME,
} from './names.js';

/** What a field check answers when the value is not one it surely accepts. */
const NO: unique symbol = Symbol('undecided');
type Out = unknown;
type Check = (v: unknown) => Out | typeof NO;

/** One field of an object: its key, its check, and whether zod requires it. */
type Field = readonly [key: string, check: Check, required?: true];

const str: Check = (v) => (typeof v === 'string' ? v : NO);
const nonEmpty: Check = (v) => (typeof v === 'string' && v.length > 0 ? v : NO);
const matching =
  (re: RegExp): Check =>
  (v) =>
    typeof v === 'string' && re.test(v) ? v : NO;
const bool: Check = (v) => (typeof v === 'boolean' ? v : NO);
const intFrom =
  (min: number): Check =>
  (v) =>
    Number.isSafeInteger(v) && (v as number) >= min ? v : NO;
const oneOf =
  (...values: readonly string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v) ? v : NO;

/** An array of at least `min` items, each passing `item`: a new array, as zod's. */
const arrayOf =
  (item: Check, min = 0): Check =>
  (v) => {
    if (!Array.isArray(v) || v.length < min) return NO;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const r = item(v[i]);
      if (r === NO) return NO;
      out[i] = r;
    }
    return out;
  };

/** The own keys of a plain object (as parsed from JSON or YAML), all ordinary enumerable strings. */
function ownKeys(v: unknown): string[] | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const keys = Object.keys(v);
  return Reflect.ownKeys(v).length === keys.length ? keys : undefined;
}

/**
 * ownKeys of a record's object; keys that zod's record treats specially (`__proto__`) or that change
 * its plain-object test (`constructor`) are left to zod.
 */
function plainKeys(v: unknown): string[] | undefined {
  const keys = ownKeys(v);
  if (keys) for (const k of keys) if (k === '__proto__' || k === 'constructor') return undefined;
  return keys;
}

/** z.record(key, value): a new object with the same keys, each value checked. */
const recordOf =
  (value: Check, key?: RegExp): Check =>
  (v) => {
    const keys = plainKeys(v);
    if (!keys) return NO;
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      if (key && !key.test(k)) return NO;
      const r = value((v as Record<string, unknown>)[k]);
      if (r === NO) return NO;
      out[k] = r;
    }
    return out;
  };

const anything: Check = (v) => (v === undefined ? NO : v);

/** baneling's tool_args values: JSON whose strings are templates, copied as zod's union copies them. */
const templatedJson: Check = (v) => {
  if (typeof v === 'string' || typeof v === 'boolean' || v === null) return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : NO;
  if (Array.isArray(v)) return arrayOf(templatedJson)(v);
  return recordOf(templatedJson)(v);
};

const nodeRef = nonEmpty;
const next: Check = (v) => (typeof v === 'string' ? nodeRef(v) : arrayOf(nodeRef, 1)(v));
const onError = oneOf(...ON_ERROR);

/** nodeBase of common.ts, in its order. */
const BASE: readonly Field[] = [
  ['name', (v) => (typeof v === 'string' && NODE_NAME.test(v) && v !== END ? v : NO)],
  ['desc', str],
  ['next', next],
  ['save_output', matching(IDENTIFIER)],
  ['write_output', str],
  ['max_visits', intFrom(1)],
  ['on_limit', nodeRef],
];

/** The fields of each node kind as its zod schema orders them (nodeBase first). */
export const FAST_NODE_FIELDS: Readonly<Record<string, readonly Field[]>> = {
  drone: [
    ...BASE,
    ['type', oneOf(...DRONE_TYPES)],
    ['usr_prompt', str, true],
    ['sys_prompt', str],
    ['model', nonEmpty],
    ['client_fallback', nonEmpty],
    ['base_url', () => NO],
    ['api_key_env', () => NO],
    ['temperature', (v) => (typeof v === 'number' && v >= 0 && v <= 2 ? v : NO)],
    ['max_tokens', intFrom(1)],
    ['timeout_ms', intFrom(1)],
    ['stream', bool],
    ['cache', bool],
    ['tools', arrayOf(nonEmpty)],
    ['mcp', arrayOf(nonEmpty)],
    ['max_turns', intFrom(1)],
    ['tool_output_limit', intFrom(100)],
    ['route', oneOf(...ROUTES)],
    ['spawn', () => NO],
    ['conversation', nonEmpty],
    ['output_schema', recordOf(anything)],
  ],
  baneling: [
    ...BASE,
    ['type', oneOf(...BANELING_TYPES), true],
    ['tool_name', nonEmpty, true],
    ['tool_args', recordOf(templatedJson)],
    ['timeout_ms', intFrom(1)],
    ['approve', bool],
  ],
  script: [
    ...BASE,
    ['type', oneOf('script'), true],
    ['cmd', arrayOf(str, 1), true],
    ['stdin', str],
    ['env', recordOf(str, ENV_NAME)],
    ['cwd', nonEmpty],
    ['timeout_ms', intFrom(1)],
    ['approve', bool],
  ],
  parallel: [
    ...BASE,
    ['type', oneOf('parallel'), true],
    ['branches', arrayOf(nodeRef, 1), true],
    ['join', str],
    ['on_error', onError],
  ],
  map: [
    ...BASE,
    ['type', oneOf('map'), true],
    ['items', str, true],
    ['node', nodeRef, true],
    ['concurrency', intFrom(1)],
    ['on_error', onError],
  ],
  loop: [
    ...BASE,
    ['type', oneOf('loop'), true],
    ['body', nodeRef, true],
    ['until', nonEmpty, true],
    ['max_iterations', intFrom(1)],
  ],
  ask: [
    ...BASE,
    ['type', oneOf('ask'), true],
    ['question', str, true],
    ['choices', arrayOf(nonEmpty, 1)],
    // Not a free-form field to the loader, which drops its `$`/`_` keys at any depth: left to zod.
    ['schema', () => NO],
  ],
};

/** The top level as hatcheryTopSchema orders it (`nodes` only checked to be a non-empty array). */
export const FAST_TOP_FIELDS: readonly Field[] = [
  ['name', matching(TOOL_NAME), true],
  ['desc', nonEmpty, true],
  ['start', nodeRef],
  ['inputs', recordOf(str, IDENTIFIER)],
  ['input_prompt', nonEmpty],
  ['files', recordOf(nonEmpty, IDENTIFIER)],
  ['model', nonEmpty],
  ['client_fallback', nonEmpty],
  ['max_steps', intFrom(1)],
  ['max_depth', intFrom(1)],
  ['budget', () => NO],
  ['prices', () => NO],
  ['cache', bool],
  ['mcpServers', () => NO],
  ['output', str],
  ['nodes', arrayOf(anything, 1), true],
];

/** A field list indexed: each key's position, and the required keys. */
interface Indexed {
  readonly at: ReadonlyMap<string, number>;
  readonly required: readonly string[];
}
const indexes = new Map<readonly Field[], Indexed>();
function indexOf(fields: readonly Field[]): Indexed {
  let ix = indexes.get(fields);
  if (!ix) {
    ix = {
      at: new Map(fields.map((f, i) => [f[0], i])),
      required: fields.filter((f) => f[2]).map((f) => f[0]),
    };
    indexes.set(fields, ix);
  }
  return ix;
}

/** A key the loader drops before validation: comments and `$schema` (stripMeta in loader/validate.ts). */
const isMeta = (key: string) => key.charCodeAt(0) === 36 || key.charCodeAt(0) === 95; // "$", "_"

/**
 * A strict object of `fields`: zod's output for `obj` (present keys in the fields' order), or
 * undefined when this check cannot decide (zod must then run). With `skipMeta`, `$`/`_` keys are
 * passed over, as the loader drops them before zod sees the object.
 */
export function fastObject(
  fields: readonly Field[],
  obj: unknown,
  skipMeta = false,
): Record<string, unknown> | undefined {
  const keys = ownKeys(obj);
  if (!keys) return undefined;
  const { at, required } = indexOf(fields);
  // Only the keys present are visited (a drone has 26 fields, a node uses a few), in the fields' order;
  // an unknown key (`__proto__` and `constructor` included) leaves the object to zod.
  const order: number[] = [];
  for (const key of keys) {
    const pos = at.get(key);
    if (pos !== undefined) order.push(pos);
    else if (!skipMeta || !isMeta(key)) return undefined;
  }
  for (const key of required) if (!Object.hasOwn(obj as object, key)) return undefined;
  order.sort((a, b) => a - b);
  const src = obj as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const pos of order) {
    const [key, check] = fields[pos]!;
    const r = check(src[key]);
    if (r === NO) return undefined;
    out[key] = r;
  }
  return out;
}

/** Whether the fast check answers at all: tests turn it off to compare the loader's results with zod's alone. */
export const fastCheck = { enabled: true };

/** zod's output of `hatcheryTopSchema` for the top level `top`, or undefined when it cannot decide. */
export function fastTop(top: unknown): Record<string, unknown> | undefined {
  return fastCheck.enabled ? fastObject(FAST_TOP_FIELDS, top) : undefined;
}

/** zod's output of node kind `kind`'s schema for `node`, or undefined when it cannot decide. */
export function fastNode(kind: string, node: unknown): Record<string, unknown> | undefined {
  const fields = Object.hasOwn(FAST_NODE_FIELDS, kind) ? FAST_NODE_FIELDS[kind] : undefined;
  return fields && fastCheck.enabled ? fastObject(fields, node) : undefined;
}

/** The node kind of a `type` value (absent: a drone), as schema/nodes.ts' TYPE_TO_KIND maps it. */
export function fastKind(type: unknown): string | undefined {
  if (type === undefined || type === 'ai' || type === 'drone') return 'drone';
  if (type === 'tool' || type === 'baneling') return 'baneling';
  return typeof type === 'string' && Object.hasOwn(FAST_NODE_FIELDS, type) ? type : undefined;
}

/**
 * A whole definition as parsed, when the loader's preparation would only drop its `$`/`_` keys (at the
 * top level and in nodes): no alias spellings (each would be an unknown key here), only the common
 * shapes. Gives what zod gives for the top level and each node after that preparation, or undefined
 * when the loader must prepare the file and check it piece by piece.
 */
export function fastDefinition(
  raw: unknown,
): { top: Record<string, unknown>; nodes: { kind: string; def: Record<string, unknown> }[] } | undefined {
  if (!fastCheck.enabled) return undefined;
  const top = fastObject(FAST_TOP_FIELDS, raw, true);
  if (!top) return undefined;
  const list = (raw as { nodes: unknown[] }).nodes;
  const nodes: { kind: string; def: Record<string, unknown> }[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const node = list[i];
    const kind =
      node !== null && typeof node === 'object' ? fastKind((node as { type?: unknown }).type) : undefined;
    const def = kind === undefined ? undefined : fastObject(FAST_NODE_FIELDS[kind]!, node, true);
    if (!def) return undefined;
    nodes[i] = { kind: kind!, def };
  }
  return { top, nodes };
}
