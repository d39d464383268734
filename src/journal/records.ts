/**
 * The journal record of each run event: every field of the event as it is, except the few listed in
 * NOT_WRITTEN, so a field added to an event reaches the journal without a change here. Content fields
 * are cleaned by the journal (redaction, large strings written once); a model call is keyed and its
 * prompt written as the journal keeps it.
 */
import type { RunEvent } from '../engine/contracts.js';
import { JOURNAL_VERSION, type JournalRecord } from './store.js';

/** What a record needs of its journal. */
export interface RecordContent {
  /** A copy of a JSON-like value: strings redacted, large strings already in the file referenced. */
  clean(value: unknown, depth: number): unknown;
  /** A model call's cassette key, and what it sent as the journal writes it. */
  modelCall(e: Extract<RunEvent, { type: 'model_call' }>): { key: string; prompt: Record<string, unknown> };
}

/**
 * Event fields the journal does not write: the run id (the file is the run's), the emitter's clock
 * reading (`at` is the record's time), a replayed flag (replayed results are not journaled), the
 * request of a model call (written as its key and prompt).
 */
export const NOT_WRITTEN: ReadonlySet<string> = new Set(['type', 'runId', 'ts', 'replayed', 'request']);

/** Fields that hold names, numbers and flags the run's file or engine made: written as they are. */
const AS_IS: ReadonlySet<string> = new Set([
  'node',
  'kind',
  'step',
  'depth',
  'parent',
  'call',
  'item',
  'parentCall',
  'seq',
  'path',
  'next',
  'chose',
  'usage',
  'steps',
  'ok',
  'isError',
  'code',
  'vendor',
  'model',
  'tool',
  'ref',
  'file',
  'attempt',
  'rateLimited',
  'retries',
  'standIn',
  'stopReason',
  'hatchery',
]);

/** The record of event `e` at `at` (ms since the epoch). */
export function eventRecord(e: RunEvent, at: number, c: RecordContent): JournalRecord {
  // A nested run's start and end are named apart: the top-level run's are the store's own records.
  const type = e.type === 'run_start' ? 'nested_start' : e.type === 'run_end' ? 'nested_end' : e.type;
  const rec: JournalRecord = { v: JOURNAL_VERSION, at, type };
  if (e.type === 'model_call') {
    // The cassette's key of the call (Cassette.chat hashes the same text), so the journal can
    // answer the call again (run --replay-run).
    const { key, prompt } = c.modelCall(e);
    rec.key = key;
    Object.assign(rec, prompt);
  }
  const fields = e as unknown as Record<string, unknown>;
  for (const k in fields) {
    const value = fields[k];
    if (value === undefined || NOT_WRITTEN.has(k)) continue;
    // The top-level run's name is its run_start's.
    if (k === 'hatchery' && e.depth === 0) continue;
    if (k === 'ms' || k === 'waitMs') rec[k] = Math.round((value as number) * 100) / 100;
    else rec[k] = AS_IS.has(k) ? value : c.clean(value, 0);
  }
  return rec;
}
