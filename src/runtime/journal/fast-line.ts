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
