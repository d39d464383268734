/**
 * The JSON lines of the records every run writes, node_start, node_end and model_call, in their
 * common shape (a top-level node, no value, no branch or call around it), each from one object of a
 * fixed shape with no spread: the record FileJournal.record builds (a literal of every field any such
 * record may have, most undefined, with spreads) cost twice as much, and text built piece by piece
 * allocated twice what JSON.stringify of the small object does (each piece, each concatenation, then
 * the flat copy the write makes of it: 1 KB per one-drone run). Each line is exactly what
 * JSON.stringify gives for the record (same fields, same order, undefined fields left out,
 * non-finite numbers as null); any other shape gives undefined and takes that path.
 */
import type { RunEvent } from '../../engine/contracts.js';
import { JOURNAL_VERSION } from './store.js';

/** A node_start or node_end line, or undefined when the event is not of the common shape. */
export function fastLine(
  e: RunEvent,
  at: number,
  /** The journal's cleaning of a content string (redaction, large-string reference). */
  str: (s: string | undefined) => string | { $same: string } | undefined,
): string | undefined {
  if (e.type === 'node_start') {
    if (e.depth !== 0 || e.parent !== undefined || e.item !== undefined) return undefined;
    if (typeof e.node !== 'string' || typeof e.kind !== 'string' || typeof e.step !== 'number')
      return undefined;
    return JSON.stringify({
      v: JOURNAL_VERSION,
      at,
      type: 'node_start',
      node: e.node,
      kind: e.kind,
      step: e.step,
      depth: 0,
    });
  }
  if (e.type !== 'node_end') return undefined;
  if (e.depth !== 0 || e.value !== undefined || e.chose !== undefined) return undefined;
  if (e.parent !== undefined || e.call !== undefined) return undefined;
  if (typeof e.node !== 'string' || typeof e.step !== 'number' || typeof e.ms !== 'number') return undefined;
  if (typeof e.path !== 'string' || typeof e.seq !== 'number') return undefined;
  if (e.next !== undefined && e.next !== null && typeof e.next !== 'string') return undefined;
  if (e.usage !== undefined && !numbersOnly(e.usage)) return undefined;
  if (e.output !== undefined && typeof e.output !== 'string') return undefined;
  // After every check: str() remembers large strings as written, and JSON.stringify of what was
  // checked cannot fail (strings, numbers, a plain object of numbers).
  const output = str(e.output);
  return JSON.stringify({
    v: JOURNAL_VERSION,
    at,
    type: 'node_end',
    node: e.node,
    step: e.step,
    depth: 0,
    output,
    usage: e.usage,
    ms: Math.round(e.ms * 100) / 100,
    path: e.path,
    seq: e.seq,
    next: e.next,
  });
}

/** A plain object whose fields are numbers or undefined (a node's usage): JSON.stringify cannot fail on it. */
function numbersOnly(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined && typeof v !== 'number') return false;
  }
  return true;
}

type ModelCall = Extract<RunEvent, { type: 'model_call' }>;

/**
 * True when a model_call has the common shape {@link modelCallLine} writes: a call that answered, with
 * no tool call of its own, not under a spawned agent's call, not retried nor stood in for. Checked
 * before the journal works out its key and prompt (which remember what they wrote), so a call of
 * another shape takes the record path having done neither.
 */
export function commonModelCall(e: ModelCall): boolean {
  if (e.call !== undefined || e.retries !== undefined || e.standIn !== undefined) return false;
  if (e.error !== undefined || e.code !== undefined) return false;
  if (typeof e.node !== 'string' || typeof e.vendor !== 'string' || typeof e.model !== 'string') return false;
  if (typeof e.depth !== 'number' || typeof e.step !== 'number' || typeof e.ms !== 'number') return false;
  if (e.text !== undefined && typeof e.text !== 'string') return false;
  if (e.stopReason !== undefined && typeof e.stopReason !== 'string') return false;
  const calls = e.toolCalls;
  if (calls !== undefined && (!Array.isArray(calls) || calls.length > 0)) return false;
  return e.usage === undefined || (e.usage !== null && typeof e.usage === 'object');
}

/**
 * The model_call line of a call for which commonModelCall holds, given its key and prompt as the
 * journal made them: exactly JSON.stringify of the record records.ts builds (same fields, same order,
 * undefined left out), from an object of one fixed shape with no spread (the record's 25 fields,
 * most of them undefined, and its spread prompt took a third of the journal's work on a one-drone
 * call). The prompt is `{ system, messages }` or `{ from, messages }` (FileJournal.prompt). `str`
 * is called in the record's order (the answer, after the prompt's), as it remembers large strings.
 */
export function modelCallLine(
  e: ModelCall,
  at: number,
  key: string,
  prompt: { system?: unknown; from?: unknown; messages?: unknown },
  str: (s: string | undefined) => string | { $same: string } | undefined,
): string {
  const rec = {
    v: JOURNAL_VERSION,
    at,
    type: 'model_call',
    node: e.node,
    depth: e.depth,
    vendor: e.vendor,
    model: e.model,
    key,
    step: e.step,
    system: prompt.system,
    from: prompt.from,
    messages: prompt.messages,
    text: str(e.text),
    // An empty list or none (commonModelCall): clean() gives it as it is.
    toolCalls: e.toolCalls,
    stopReason: e.stopReason,
    usage: e.usage,
    ms: Math.round(e.ms * 100) / 100,
  };
  try {
    return JSON.stringify(rec);
  } catch (err) {
    // A value JSON cannot hold (a BigInt): the record path writes this for it too.
    return JSON.stringify({ v: JOURNAL_VERSION, at, type: 'unwritable', of: e.type, error: String(err) });
  }
}
