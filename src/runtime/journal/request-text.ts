/**
 * The text a model call's journal key hashes: canonicalJson(chatRequestShape(vendor, request)), the
 * cassette's key text, written field by field. Each message's canonical text is kept per message
 * object, as the providers keep its wire form: a tool loop sends its whole conversation on every
 * turn, and only the messages added since the last turn are written again.
 */
import type { ChatRequest } from '../../providers/types.js';
import { canonicalJson } from '../cassette/canonical.js';

/** A request's canonical text, and whether JSON.stringify of its messages gives the same values. */
export interface RequestText {
  text: string;
  /**
   * Every object in the messages is a plain object or an array, nested at most PLAIN_DEPTH deep: the
   * journal may then write them as they are instead of a cleaned copy (when nothing needs redacting).
   */
  plain: boolean;
}

/** Deeper than this, a message is not plain (the journal's clean() cuts values at 64). */
const PLAIN_DEPTH = 32;

/** The canonical text of each message object, and whether it is plain. */
const messageTexts = new WeakMap<object, RequestText>();

/**
 * The canonical text of one message, kept when `keep` (see messageTexts): only messages of a
 * conversation are, as a one-message request (most drones) is not sent again, and keeping costs.
 */
export function messageText(m: unknown, keep: boolean): RequestText {
  if (m === null || typeof m !== 'object') {
    return { text: canonicalJson(m === undefined || typeof m === 'function' ? null : m), plain: true };
  }
  let t = keep ? messageTexts.get(m) : undefined;
  if (t === undefined) {
    const state = { plain: true };
    t = { text: write(m, 0, state) ?? 'null', plain: state.plain };
    if (keep) messageTexts.set(m, t);
  }
  return t;
}

/**
 * canonical() of cassette/canonical.ts for plain JSON values; anything else (an object of another
 * class, integer-like keys, deep nesting) is handed to canonicalJson itself and marks the value not plain.
 */
function write(value: unknown, depth: number, state: { plain: boolean }): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      // undefined, a function or a symbol is left out (JSON leaves them out too); a bigint throws.
      return typeof value === 'bigint' ? JSON.stringify(value) : undefined;
  }
  if (value === null) return 'null';
  if (depth > PLAIN_DEPTH) return other(value, state);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += write(value[i], depth + 1, state) ?? 'null';
    }
    return `${text}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return other(value, state);
  const keys = Object.keys(value);
  sortKeys(keys);
  let text = '{';
  for (const k of keys) {
    const c = k.charCodeAt(0);
    // An integer-like key changes the key order canonicalJson keeps (integer keys first).
    if (c >= 48 && c <= 57) return other(value, state);
    const v = write((value as Record<string, unknown>)[k], depth + 1, state);
    if (v === undefined) continue;
    text += text.length === 1 ? `${JSON.stringify(k)}:${v}` : `,${JSON.stringify(k)}:${v}`;
  }
  return `${text}}`;
}

/** A value the fast writer leaves to canonicalJson (undefined for what an object leaves out). */
function other(value: unknown, state: { plain: boolean }): string | undefined {
  state.plain = false;
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  return canonicalJson(value);
}

/** Sorts a few keys in place, as Array.prototype.sort() would (UTF-16 order), without its overhead. */
function sortKeys(keys: string[]): void {
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

/** A top-level field: `,"name":value`, or nothing when the value is left out. */
function field(name: string, value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return `,"${name}":${JSON.stringify(value)}`;
  const text = canonicalJson(value);
  // canonicalJson gives 'null' for what JSON leaves out of an object (a function, a symbol).
  if (text === 'null' && value !== null && typeof value !== 'number') return '';
  return `,"${name}":${text}`;
}

/**
 * A request's key text in three parts: what comes before its messages (`{"maxTokens":1,"messages":[`),
 * and after them (`],"model":...}`); the messages' own texts are messageText's, joined by commas.
 * `messages` is false when the request's messages are not a list (then head and tail hold everything).
 */
export interface RequestParts {
  head: string;
  tail: string;
  messages: boolean;
}

/** The parts of canonicalJson(chatRequestShape(vendor, request)) around its messages (see RequestParts). */
export function requestParts(vendor: string, req: ChatRequest): RequestParts {
  // The shape's fields in sorted order: maxTokens, messages, model, responseSchema, system,
  // temperature, toolChoice, tools, vendor. Each field is written with a leading comma, cut below.
  let head = field('maxTokens', req.maxTokens);
  const list = Array.isArray(req.messages);
  head += list ? ',"messages":[' : field('messages', req.messages);
  let tail = list ? ']' : '';
  tail += field('model', req.model);
  tail += field('responseSchema', req.responseSchema);
  tail += field('system', req.system);
  tail += field('temperature', req.temperature);
  tail += field('toolChoice', req.toolChoice);
  tail += field('tools', req.tools);
  tail += field('vendor', vendor);
  if (head !== '') return { head: `{${head.slice(1)}`, tail: `${tail}}`, messages: list };
  return { head: '{', tail: `${tail.slice(1)}}`, messages: list };
}

/** canonicalJson(chatRequestShape(vendor, request)), with each message's text kept per message. */
export function requestText(vendor: string, req: ChatRequest): RequestText {
  const { head, tail, messages } = requestParts(vendor, req);
  if (!messages) return { text: head + tail, plain: false };
  let text = head;
  let plain = true;
  const keep = req.messages.length > 1;
  for (let i = 0; i < req.messages.length; i++) {
    const m = messageText(req.messages[i], keep);
    if (!m.plain) plain = false;
    text += i === 0 ? m.text : `,${m.text}`;
  }
  return { text: text + tail, plain };
}
