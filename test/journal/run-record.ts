import { readFileSync } from 'node:fs';
import { JOURNAL_VERSION } from '../../src/runtime/journal/store.js';

/** A journal line as the tests read it. */
export type Rec = { type: string; [k: string]: unknown };

/** The records of a journal file, one per line. */
export const readRecords = (file: string): Rec[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Rec);

/** The run_start record a store writes first, for run files written by hand in tests. */
export function runStartRecord(id: string, owner: { pid: number; host: string; since: number }) {
  return {
    v: JOURNAL_VERSION,
    at: Date.now(),
    type: 'run_start',
    id,
    hatchery: 'h',
    file: '',
    hash: '0',
    nodes: {},
    source: 'cli',
    startedAt: Date.now(),
    owner,
  };
}
