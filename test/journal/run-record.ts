import { JOURNAL_VERSION } from '../../src/runtime/journal/store.js';

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
