/**
 * The text a model call's journal key hashes: canonicalJson(chatRequestShape(vendor, request)), the
 * cassette's key text, written field by field. Each message's canonical text is kept per message
 * object, as the providers keep its wire form: a tool loop sends its whole conversation on every
 * turn, and only the messages added since the last turn are written again.
 */
import type { ChatRequest } from '../providers/types.js';
import { canonicalJson, canonicalText } from './canonical.js';

/** A request's canonical text, and whether JSON.stringify of its messages gives the same values. */
export interface RequestText {
  text: string;
  /**
   * The messages are plain (see canonicalText): the journal may then write them as they are instead of
   * a cleaned copy (when nothing needs redacting).
   */
  plain: boolean;
}

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
    t = canonicalText(m);
    if (keep) messageTexts.set(m, t);
  }
  return t;
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

/**
 * The parts of the last request whose fields besides its messages are all strings, numbers or left
 * out (a drone's: every run of a loaded file sends the same ones), kept with those fields: the next
 * such request with the same fields gets the same parts (immutable strings), not a dozen new ones.
 */
let last:
  | {
      vendor: string;
      maxTokens: unknown;
      model: unknown;
      system: unknown;
      temperature: unknown;
      toolChoice: unknown;
      parts: RequestParts;
    }
  | undefined;

/** True for what the last parts may be kept for: left out, a string or a number (compared by value). */
const scalar = (v: unknown): boolean => v === undefined || typeof v === 'string' || typeof v === 'number';

/** The parts of canonicalJson(chatRequestShape(vendor, request)) around its messages (see RequestParts). */
export function requestParts(vendor: string, req: ChatRequest): RequestParts {
  const simple =
    req.responseSchema === undefined &&
    req.tools === undefined &&
    Array.isArray(req.messages) &&
    scalar(req.maxTokens) &&
    scalar(req.model) &&
    scalar(req.system) &&
    scalar(req.temperature) &&
    scalar(req.toolChoice);
  if (
    simple &&
    last !== undefined &&
    last.vendor === vendor &&
    Object.is(last.maxTokens, req.maxTokens) &&
    last.model === req.model &&
    last.system === req.system &&
    Object.is(last.temperature, req.temperature) &&
    last.toolChoice === req.toolChoice
  ) {
    return last.parts;
  }
  const parts = buildParts(vendor, req);
  if (simple) {
    last = {
      vendor,
      maxTokens: req.maxTokens,
      model: req.model,
      system: req.system,
      temperature: req.temperature,
      toolChoice: req.toolChoice,
      parts,
    };
  }
  return parts;
}

function buildParts(vendor: string, req: ChatRequest): RequestParts {
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
