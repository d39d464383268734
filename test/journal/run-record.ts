import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FileRunStore } from '../../src/journal/file-store.js';
import { JournalFile } from '../../src/journal/journal-file.js';
import { Extra, LineJournal } from '../../src/journal/line-journal.js';
import { JOURNAL_VERSION } from '../../src/journal/store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load } from '../helpers.js';

/** A journal line as the tests read it. */
export type Rec = { type: string; [k: string]: unknown };

/** The records of a journal file, one per line. */
export const readRecords = (file: string): Rec[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Rec);

/** The journal of run `id` in `file`, its run_start buffered (no secrets, nobody told of its end). */
export const startedJournal = (file: string, id: string): LineJournal =>
  new LineJournal((failed) => new JournalFile(file, failed), id, {
    secrets: [],
    onEnd: () => {},
    first: new Extra('run_start', { id }),
  });

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

/**
 * A journaled two-drone chain (A, then B) in `dir`, its store in `dir/runs`, whose model answers
 * "done" after `delayMs`: for bursts of runs.
 */
export function journaledChain(dir: string, delayMs: number) {
  const store = new FileRunStore(path.join(dir, 'runs'), { env: {} });
  const model = new ScriptedProvider(() => 'done', { delayMs });
  const runtime = new Runtime({ providers: { openai: model }, env: {}, store, cwd: dir });
  const h = load(
    hatch([
      { name: 'A', model: 'openai:gpt-test', usr_prompt: 'first {{ ctx.input }}', next: 'B' },
      { name: 'B', model: 'openai:gpt-test', usr_prompt: 'then {{ out.A }}' },
    ]),
    dir,
  );
  return { store, runtime, h };
}
