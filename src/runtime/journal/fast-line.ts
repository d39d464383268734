/**
 * The JSON line of the two records every node writes, node_start and node_end, in their common
 * shape (a top-level node, no value, no branch or call around it), written as text: building the
 * record object and handing it to JSON.stringify cost twice as much. The text is exactly what
 * JSON.stringify gives for the record FileJournal.record builds (same fields, same order, undefined
 * fields left out, non-finite numbers as null); any other shape gives undefined and takes that path.
 */
import type { RunEvent } from '../../engine/contracts.js';
import { JOURNAL_VERSION } from './store.js';

/** A number as JSON writes it. */
const num = (n: number): string => (Number.isFinite(n) ? `${n}` : 'null');

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
    return `{"v":${JOURNAL_VERSION},"at":${num(at)},"type":"node_start","node":${JSON.stringify(e.node)},"kind":${JSON.stringify(e.kind)},"step":${num(e.step)},"depth":0}`;
  }
  if (e.type !== 'node_end') return undefined;
  if (e.depth !== 0 || e.value !== undefined || e.chose !== undefined) return undefined;
  if (e.parent !== undefined || e.call !== undefined) return undefined;
  if (typeof e.node !== 'string' || typeof e.step !== 'number' || typeof e.ms !== 'number') return undefined;
  if (typeof e.path !== 'string' || typeof e.seq !== 'number') return undefined;
  if (e.next !== undefined && e.next !== null && typeof e.next !== 'string') return undefined;
  if (e.usage !== undefined && (e.usage === null || typeof e.usage !== 'object')) return undefined;
  if (e.output !== undefined && typeof e.output !== 'string') return undefined;
  // Before str(), which remembers large strings as written: nothing may fail after it.
  const usage = e.usage === undefined ? undefined : JSON.stringify(e.usage);
  const output = str(e.output);
  let text = `{"v":${JOURNAL_VERSION},"at":${num(at)},"type":"node_end","node":${JSON.stringify(e.node)},"step":${num(e.step)},"depth":0`;
  if (output !== undefined) text += `,"output":${JSON.stringify(output)}`;
  if (usage !== undefined) text += `,"usage":${usage}`;
  text += `,"ms":${num(Math.round(e.ms * 100) / 100)},"path":${JSON.stringify(e.path)},"seq":${num(e.seq)}`;
  if (e.next !== undefined) text += `,"next":${e.next === null ? 'null' : JSON.stringify(e.next)}`;
  return `${text}}`;
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
