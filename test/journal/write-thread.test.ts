/**
 * A busy process hands its journal's file calls to a write thread through a ring of shared memory.
 * What a journal holds, and when a waiter may read it, must not change (journal-write.test.ts runs its
 * cases through the thread too): every descriptor closed after a burst, a process that exits in the
 * turn its runs end leaving every file whole, and the thread keeping no process alive.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { killWriteThread, setWriteThread, threadDrained } from '../../src/runtime/journal/journal-file.js';
import { tempDir } from '../helpers.js';
import { journaledChain, readRecords, startedJournal } from './run-record.js';

const read = readRecords;

/**
 * Journals `count` runs through the write thread in a child process of the built code, each ended at
 * once: `threadUp` waits for the thread first (else it is still starting), `note` adds a record, and
 * `exitNextTurn` calls process.exit() on the next turn (else the event loop just empties).
 */
function journalsInChild(
  dir: string,
  count: number,
  o: { threadUp: boolean; note: boolean; exitNextTurn: boolean },
) {
  const dist = new URL('../../dist/runtime/journal/', import.meta.url).href;
  const script = `
    const { FileJournal } = await import('${dist}file-journal.js');
    const { setWriteThread } = await import('${dist}journal-file.js');
    ${o.threadUp ? 'await' : 'void'} setWriteThread('always');
    for (let i = 0; i < ${count}; i++) {
      const j = new FileJournal(${JSON.stringify(dir)} + '/' + i + '.jsonl', String(i), [], () => {},
        FileJournal.record('run_start', { id: String(i) }));
      ${o.note ? "j.append('note', { text: 'x'.repeat(200) });" : ''}
      j.end('succeeded', { i });
    }
    ${o.exitNextTurn ? 'setImmediate(() => process.exit(0));' : ''}
  `;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
}

/** Every one of `count` files of `dir` holds exactly `types`, in order. */
function expectWhole(dir: string, count: number, types: string[]): void {
  const files = readdirSync(dir);
  expect(files).toHaveLength(count);
  for (const f of files) expect(read(path.join(dir, f)).map((x) => x.type)).toEqual(types);
}

beforeAll(async () => {
  await setWriteThread('always');
});
afterAll(async () => {
  await setWriteThread(undefined);
});

describe('the journal write thread', () => {
  it('is up, and what it was given is on disk once a waiter resolves', async () => {
    const dir = tempDir('hatchery-write-thread-');
    const file = path.join(dir, 'a.jsonl');
    const j = startedJournal(file, 'a');
    j.append('note', { n: 1 });
    await j.flush();
    // Written by the thread: flush() resolved only once the thread had caught up.
    expect(read(file).map((r) => r.type)).toEqual(['run_start', 'note']);
    await j.end('succeeded', {});
    expect(read(file).at(-1)?.type).toBe('run_end');
    expect(threadDrained()).toBeUndefined();
  });

  it('writes records nobody waits for by itself, a moment later (the thread is woken without a waiter)', async () => {
    const dir = tempDir('hatchery-write-thread-');
    const file = path.join(dir, 'quiet.jsonl');
    const j = startedJournal(file, 'q');
    j.append('note', { n: 1 });
    // Not awaited, as a served call's run never awaits its journal: no waiter wakes the thread.
    void j.end('succeeded', {});
    const types = () => (existsSync(file) ? read(file).map((r) => r.type) : []);
    await vi.waitFor(() => expect(types()).toEqual(['run_start', 'note', 'run_end']), {
      timeout: 5_000,
      interval: 5,
    });
  });

  it('journals a burst of 400 runs whole through a store, and closes every file after', async () => {
    const dir = tempDir('hatchery-write-thread-');
    const { store, runtime, h } = journaledChain(dir, 20);
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = process.platform === 'linux' ? fds() : 0;
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) => runtime.run(h, { input: `n${i}` })),
    );
    await store.idle();
    const runs = await store.list({ limit: 1000 });
    expect(runs).toHaveLength(400);
    for (const s of runs) expect(s).toMatchObject({ status: 'succeeded', steps: 2 });
    const one = await store.read(results[217]!.runId);
    expect(one?.records.map((r) => r.type)).toEqual([
      'run_start',
      'node_start',
      'model_call',
      'node_end',
      'node_start',
      'model_call',
      'node_end',
      'run_end',
    ]);
    if (process.platform === 'linux') expect(fds()).toBeLessThanOrEqual(before + 2);
    await runtime.close();
    await store.close();
  });

  it('a process that exits in the turn its runs end leaves every file whole', () => {
    const dir = tempDir('hatchery-write-thread-');
    // 3,000 journals through the thread (tens of ms of file calls for it), ended, and process.exit()
    // in the next turn: no waiter ever asks the thread to catch up (without the exit's wait for the
    // ring, 21 files of 3,000 were there). The parent runs with --input-type=module, which a thread
    // inherits unless told otherwise: its code must run as a module too.
    const r = journalsInChild(dir, 3000, { threadUp: true, note: true, exitNextTurn: true });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expectWhole(dir, 3000, ['run_start', 'note', 'run_end']);
  });

  it('keeps no process alive: a command that journals and returns exits by itself, its files whole', () => {
    const dir = tempDir('hatchery-write-thread-');
    // No process.exit and no wait: the event loop empties, and the thread must not hold it open. The
    // thread is still starting when the last file is written, as in a command whose run passes the
    // threshold (with its listeners added after unref(), this hung until killed).
    const r = journalsInChild(dir, 20, { threadUp: false, note: false, exitNextTurn: false });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expectWhole(dir, 20, ['run_start', 'run_end']);
  });

  it('a thread stuck in a file call is given up when the ring is full: the writer waits 2 s, not forever, and later journals are whole', () => {
    if (process.platform !== 'linux') return;
    const dir = tempDir('hatchery-write-thread-');
    // A journal file that is a FIFO nobody reads: the thread's open of it blocks, and the ring fills
    // behind it with 20 journals of 200 KB (the ring holds 2 MiB).
    const fifo = path.join(dir, 'stuck.jsonl');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const dist = new URL('../../dist/runtime/journal/', import.meta.url).href;
    const script = `
      import fs from 'node:fs';
      const { FileJournal } = await import('${dist}file-journal.js');
      const { setWriteThread } = await import('${dist}journal-file.js');
      await setWriteThread('always');
      const dir = ${JSON.stringify(dir)};
      const stuck = new FileJournal(dir + '/stuck.jsonl', 'stuck', [], () => {}, FileJournal.record('run_start', { id: 'stuck' }));
      void stuck.flush();
      const journals = [];
      for (let i = 0; i < 20; i++) {
        const j = new FileJournal(dir + '/' + i + '.jsonl', String(i), [], () => {}, FileJournal.record('run_start', { id: String(i) }));
        j.append('note', { text: 'x'.repeat(200000) });
        void j.flush();
        journals.push(j);
      }
      await Promise.all(journals.map((j) => j.end('succeeded', {})));
      console.log(JSON.stringify(journals.map((j) => (j.error ? String(j.error.message ?? j.error) : null))));
      // A reader at last, so that the thread's open returns and the process can end.
      fs.openSync(dir + '/stuck.jsonl', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      process.exit(0);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.signal).toBeNull();
    // The given-up writes are said once on stderr (issue 36: a failed journal write is never silent).
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /writing the run journal in .* failed \(EIO: the journal's write thread wrote nothing/,
    );
    expect(r.status).toBe(0);
    const errors = JSON.parse(r.stdout) as (string | null)[];
    const givenUp = errors.findIndex((e) => e !== null);
    expect(errors[givenUp]).toMatch(/write thread wrote nothing for 2000 ms/);
    for (let i = 0; i < 20; i++) {
      const types = read(path.join(dir, `${i}.jsonl`)).map((x) => x.type);
      // What the ring held when the thread was given up is lost; every last record is written.
      expect(types.at(-1)).toBe('run_end');
      if (i > givenUp) expect(types).toEqual(['run_start', 'note', 'run_end']);
    }
  });

  it('when the thread dies, its files and new ones are written on this thread, whole after the death', async () => {
    const dir = tempDir('hatchery-write-thread-');
    const aFile = path.join(dir, 'a.jsonl');
    const a = startedJournal(aFile, 'a');
    a.append('note', { n: 1 });
    await a.flush();
    await killWriteThread();
    // A file the thread had open, and one made after.
    a.append('note', { n: 2 });
    const bFile = path.join(dir, 'b.jsonl');
    const b = startedJournal(bFile, 'b');
    await Promise.all([a.end('succeeded', {}), b.end('succeeded', {})]);
    expect(read(aFile).map((r) => r.n ?? r.type)).toEqual(['run_start', 1, 2, 'run_end']);
    expect(read(bFile).map((r) => r.type)).toEqual(['run_start', 'run_end']);
    expect(a.error).toBeUndefined();
    expect(threadDrained()).toBeUndefined();
  });
});
