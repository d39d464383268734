/**
 * Which messages of each model conversation a reader of a run has already taken, so a tool loop's
 * conversation, sent whole on every turn, is written (journal) or shown (--verbose) once.
 */
import type { RunEvent } from '../engine/contracts.js';

/** Remembers, per conversation (a node execution, or a spawned agent's), how many messages were taken. */
export class ConversationCursor {
  /** The first conversation's key and state, kept in fields: most runs have one (a drone's). */
  private firstKey: number | string | undefined;
  private first: { system: string; count: number } | undefined;
  /** The other conversations, made at the second. */
  private taken: Map<number | string, { system: string; count: number }> | undefined;

  /**
   * The index of the first message of `call`'s request not taken yet (0 for a new conversation: another
   * system prompt, or fewer messages than before, as when a spawned agent runs beside another), and
   * marks them taken; `plus` more are marked too (the reply, which a reader shows with the call).
   */
  next(call: Extract<RunEvent, { type: 'model_call' }>, plus = 0): number {
    const { system, messages } = call.request;
    const key = call.call === undefined ? call.step : `${call.step}|${call.call}`;
    const mine = this.first === undefined || this.firstKey === key;
    const before = mine ? this.first : this.taken?.get(key);
    const from =
      before !== undefined && before.system === system && before.count <= messages.length ? before.count : 0;
    const now = { system, count: messages.length + plus };
    if (mine) {
      this.firstKey = key;
      this.first = now;
    } else {
      this.taken ??= new Map();
      this.taken.set(key, now);
    }
    return from;
  }
}
