import { hash } from 'node:crypto';
import { redactText } from '../core/secrets.js';
import type { ChatRequest } from '../providers/types.js';

/**
 * A value as canonical JSON: object keys sorted, undefined members dropped, so the same request
 * always gives the same text (and hash) whatever order its fields were built in.
 */
export function canonicalJson(value: unknown, indent?: number): string {
  const text = canonical(value, 0) ?? 'null';
  // Parsing keeps the key order: integer keys come first in the text, as in any parsed object.
  return indent === undefined ? text : JSON.stringify(JSON.parse(text), null, indent);
}

const INDEX = /^(?:0|[1-9]\d*)$/;
const isIndex = (k: string) => {
  const c = k.charCodeAt(0);
  return c >= 48 && c <= 57 && INDEX.test(k) && Number(k) < 4294967295;
};

/**
 * The keys sorted as an object built in sorted order lists them (the order the keys of recorded
 * cassettes and journals were made in): integer keys first, ascending, then the others sorted.
 */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  sortFew(keys);
  if (!keys.some(isIndex)) return keys;
  const ints = keys.filter(isIndex).sort((a, b) => Number(a) - Number(b));
  for (const k of keys) if (!isIndex(k)) ints.push(k);
  return ints;
}

/** Sorts keys in place as Array.prototype.sort() would (UTF-16 order); a few without its overhead. */
function sortFew(keys: string[]): void {
  if (keys.length > 8) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
}

/** Nesting past which a value is not plain (see canonicalText; the journal's clean() cuts at 64). */
const PLAIN_DEPTH = 32;

/**
 * canonicalJson(value), and whether the value is plain: every object in it a plain object (or null
 * prototype) or an array, nested at most PLAIN_DEPTH deep, with no key starting with a digit. The
 * journal writes a plain value as it is instead of a cleaned copy, as JSON.stringify gives it the
 * same values and key order.
 */
export function canonicalText(value: unknown): { text: string; plain: boolean } {
  const state = { plain: true };
  return { text: canonical(value, 0, state) ?? 'null', plain: state.plain };
}

/**
 * The canonical text of a value: undefined, a function or a symbol is left out of an object
 * (undefined for the caller) and null in an array, as JSON.stringify does. A cycle overflows the
 * stack (a RangeError), as JSON.stringify of a cyclic value throws.
 */
function canonical(value: unknown, depth: number, state?: { plain: boolean }): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      // undefined, functions and symbols; a bigint throws as JSON.stringify does.
      return typeof value === 'bigint' ? JSON.stringify(value) : undefined;
  }
  if (value === null) return 'null';
  if (state?.plain && depth > PLAIN_DEPTH) state.plain = false;
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += canonical(value[i], depth + 1, state) ?? 'null';
    }
    return `${text}]`;
  }
  const keys = sortedKeys(value);
  if (state?.plain && !isPlainObject(value, keys)) state.plain = false;
  let text = '{';
  let first = true;
  for (const k of keys) {
    const v = canonical((value as Record<string, unknown>)[k], depth + 1, state);
    if (v === undefined) continue;
    text += first ? `${JSON.stringify(k)}:${v}` : `,${JSON.stringify(k)}:${v}`;
    first = false;
  }
  return `${text}}`;
}

/** A plain object (or null prototype) with no key starting with a digit (see canonicalText). */
function isPlainObject(value: object, keys: readonly string[]): boolean {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of keys) {
    const c = k.charCodeAt(0);
    if (c >= 48 && c <= 57) return false;
  }
  return true;
}

/** 16 hex digits of the SHA-256 of a text: the journal's keys, large-string references and hashes. */
export function sha16(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 16);
}

/** The cassette key of a canonical (already redacted) request: 16 hex digits of its SHA-256. */
export function requestKey(request: unknown): string {
  return sha16(canonicalJson(request));
}

/** Fields dropped whole from what is written: their values are credentials whatever they look like. */
export const CREDENTIAL_KEY = /^(authorization|api[-_]?key|x-api-key|cookie|set-cookie)$/i;

/**
 * A deep copy of a JSON-like value with every string cleaned of secrets (the environment's secret
 * values, key shapes, authorization headers). Cassettes are committed: nothing secret may reach one,
 * and a key must not change a request's hash.
 */
export function redactDeep(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets, { authHeaders: true });
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function') continue;
    // Header maps and fields named like credentials are dropped whole, not just cleaned.
    if (CREDENTIAL_KEY.test(k)) {
      out[k] = '[redacted]';
      continue;
    }
    out[k] = redactDeep(v, secrets);
  }
  return out;
}

/**
 * The fields of a model request that make its cassette key (and its journal record's): what the
 * model sees, never transport details (streaming, signal, callbacks).
 */
export function chatRequestShape(vendor: string, req: ChatRequest): Record<string, unknown> {
  return {
    vendor,
    model: req.model,
    system: req.system,
    messages: req.messages,
    tools: req.tools,
    toolChoice: req.toolChoice,
    temperature: req.temperature,
    maxTokens: req.maxTokens,
    responseSchema: req.responseSchema,
  };
}

/** True for the tool references whose calls a cassette records and answers: the ones that reach other systems. */
export function recordedToolRef(ref: string): boolean {
  return ref.startsWith('mcp:') || ref.startsWith('a2a:') || ref === 'http_request';
}

/** The fields of a tool call that make its cassette key: the tool's reference, its name and arguments. */
export function toolRequestShape(
  ref: string,
  name: string,
  args: Record<string, unknown>,
): Record<string, unknown> {
  return { tool: ref, name, args };
}
