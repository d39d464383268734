import type { ToolResult } from '../engine/contracts.js';

/**
 * What a js: call does around the function: the check of its arguments, and the result it returns.
 *
 * The check of a js: tool's arguments against the usual JSON Schema of them (typed properties, the
 * required names) that copies nothing. When it passes, zod's parse would accept the arguments and
 * return an equal object (the same keys, in the same order, with the same values), so the function
 * gets them as they are; zod's parse copies the object on every call. Anything the check is not sure
 * of goes to zod, which gives the verdict and the error text as before.
 */

/** True when the arguments certainly pass (false is "ask zod", not "invalid"). */
export type QuickCheck = (args: Record<string, unknown>) => boolean;

const TYPES: Readonly<Record<string, (v: unknown) => boolean>> = {
  string: (v) => typeof v === 'string',
  // zod's number and int refuse NaN, the infinities and unsafe integers.
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isSafeInteger(v),
  boolean: (v) => typeof v === 'boolean',
};

/** Schema keywords that change nothing zod checks or outputs for an object of typed properties. */
const SCHEMA_KEYS = new Set(['type', 'properties', 'required', 'description', 'title', '$schema']);
const PROPERTY_KEYS = new Set(['type', 'description', 'title']);

const isPlain = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The copy-free check of a JSON Schema, or undefined when the schema uses anything else (defaults,
 * formats, enums, nested objects, additionalProperties...): those calls always go through zod.
 */
export function quickCheck(json: Record<string, unknown>): QuickCheck | undefined {
  if (json.type !== 'object') return undefined;
  for (const k of Object.keys(json)) if (!SCHEMA_KEYS.has(k)) return undefined;
  const props = json.properties ?? {};
  if (!isPlain(props)) return undefined;
  const names = Object.keys(props);
  const tests: ((v: unknown) => boolean)[] = [];
  for (const name of names) {
    const p = props[name];
    if (!isPlain(p)) return undefined;
    for (const k of Object.keys(p)) if (!PROPERTY_KEYS.has(k)) return undefined;
    const test = typeof p.type === 'string' && Object.hasOwn(TYPES, p.type) ? TYPES[p.type] : undefined;
    if (!test) return undefined;
    tests.push(test);
  }
  const required = new Array<boolean>(names.length).fill(false);
  let requiredCount = 0;
  if (json.required !== undefined) {
    if (!Array.isArray(json.required)) return undefined;
    for (const r of json.required) {
      const i = names.indexOf(r as string);
      if (i < 0 || required[i]) return undefined;
      required[i] = true;
      requiredCount++;
    }
  }
  return (args) => {
    if (Object.getPrototypeOf(args) !== Object.prototype) return false;
    let seen = 0;
    let at = 0;
    // zod's output lists the schema's properties in the schema's order: the arguments must already.
    // for-in, not Object.keys (no array per call): it lists the own keys in the same order, then any
    // enumerable key added to Object.prototype, which fails the check (the arguments go through zod).
    for (const k in args) {
      if (!Object.hasOwn(args, k)) return false;
      while (at < names.length && names[at] !== k) at++;
      if (at === names.length || !tests[at]!(args[k])) return false;
      if (required[at]) seen++;
      at++;
    }
    return seen === requiredCount;
  };
}

/** Turns what a js: function returned into a tool result. */
export function jsResult(value: unknown): ToolResult {
  if (typeof value === 'string') return { text: value };
  if (value === undefined || value === null) return { text: '' };
  if (typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o);
    if (
      typeof o.text === 'string' &&
      keys.every((k) => k === 'text' || k === 'isError' || k === 'structured')
    ) {
      const r: ToolResult = { text: o.text };
      if (o.isError === true) r.isError = true;
      if (o.structured !== undefined) r.structured = o.structured;
      return r;
    }
  }
  if (typeof value !== 'object') return { text: String(value) };
  return { text: JSON.stringify(value), structured: value };
}
