/**
 * --events: the run's event stream as JSON lines, one object per event with the time it was seen
 * (`at`, milliseconds since the epoch, as in the journal). Redacted like the journal: every string is
 * cleaned of the run's secrets and key shapes, credential fields are dropped, and a model call's
 * request is its content (system, messages, tools, settings), never its signal or callbacks.
 */
import type { RunEvent } from '../../engine/contracts.js';
import { chatRequestShape, redactDeep } from '../../journal/canonical.js';
import { printableJson } from '../print.js';

/** The JSON line of one event (no newline). */
export function eventLine(e: RunEvent, at: number, secrets: readonly string[]): string {
  // ts (a performance.now() reading, for the journal's clock) is left out: `at` is the time here.
  const { type, ts: _ts, ...rest } = e as RunEvent & Record<string, unknown>;
  const fields: Record<string, unknown> = { at, type, ...rest };
  if (e.type === 'model_call') fields.request = chatRequestShape(e.vendor, e.request);
  const clean = redactDeep(fields, secrets);
  try {
    return printableJson(clean);
  } catch (err) {
    // A value JSON cannot hold (a BigInt in a structured output) loses the event's content, not the stream.
    return JSON.stringify({ at, type, runId: e.runId, unwritable: String(err) });
  }
}
