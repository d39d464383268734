/**
 * A busy process hands its journal's file calls to a write thread through a ring of shared memory.
 * What a journal holds, and when a waiter may read it, must not change (journal-write.test.ts runs its
 * cases through the thread too): every descriptor closed after a burst, a process that exits in the
 * turn its runs end leaving every file whole, and the thread keeping no process alive.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { FileJournal } from '../../src/runtime/journal/file-journal.js';
import { FileRunStore } from '../../src/runtime/journal/file-store.js';
import { killWriteThread, setWriteThread, threadDrained } from '../../src/runtime/journal/journal-file.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';
import { readRecords } from './run-record.js';

const read = readRecords;

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
    const j = new FileJournal(file, 'a', [], () => {}, FileJournal.record('run_start', { id: 'a' }));
    j.append('note', { n: 1 });
    await j.flush();
    // Written by the thread: flush() resolved only once the thread had caught up.
    expect(read(file).map((r) => r.type)).toEqual(['run_start', 'note']);
    await j.end('succeeded', {});
    expect(read(file).at(-1)?.type).toBe('run_end');
    expect(threadDrained()).toBeUndefined();
  });

  it('journals a burst of 400 runs whole through a store, and closes every file after', async () => {
    const dir = tempDir('hatchery-write-thread-');
    const store = new FileRunStore(path.join(dir, 'runs'), { env: {} });
    const model = new ScriptedProvider(() => 'done', { delayMs: 20 });
    const runtime = new Runtime({ providers: { openai: model }, env: {}, store, cwd: dir });
    const h = load(
      hatch([
        { name: 'A', model: 'openai:gpt-test', usr_prompt: 'first {{ ctx.input }}', next: 'B' },
        { name: 'B', model: 'openai:gpt-test', usr_prompt: 'then {{ out.A }}' },
      ]),
      dir,
    );
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
    const dist = new URL('../../dist/runtime/journal/', import.meta.url).href;
    // 3,000 journals through the thread (tens of ms of file calls for it), ended, and process.exit()
    // in the next turn: no waiter ever asks the thread to catch up (without the exit's wait for the
    // ring, 21 files of 3,000 were there). The parent runs with --input-type=module, which a thread
    // inherits unless told otherwise: its code must run as a module too.
    const script = `
      const { FileJournal } = await import('${dist}file-journal.js');
      const { setWriteThread } = await import('${dist}journal-file.js');
      await setWriteThread('always');
      for (let i = 0; i < 3000; i++) {
        const j = new FileJournal(${JSON.stringify(dir)} + '/' + i + '.jsonl', String(i), [], () => {},
          FileJournal.record('run_start', { id: String(i) }));
        j.append('note', { text: 'x'.repeat(200) });
        j.end('succeeded', { i });
      }
      setImmediate(() => process.exit(0));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const files = readdirSync(dir);
    expect(files).toHaveLength(3000);
    for (const f of files) {
      const recs = read(path.join(dir, f));
      expect(recs.map((x) => x.type)).toEqual(['run_start', 'note', 'run_end']);
    }
  });

  it('keeps no process alive: a command that journals and returns exits by itself, its files whole', () => {
    const dir = tempDir('hatchery-write-thread-');
    const dist = new URL('../../dist/runtime/journal/', import.meta.url).href;
    // No process.exit and no wait: the event loop empties, and the thread must not hold it open. The
    // thread is still starting when the last file is written, as in a command whose run passes the
    // threshold (with its listeners added after unref(), this hung until killed).
    const script = `
      const { FileJournal } = await import('${dist}file-journal.js');
      const { setWriteThread } = await import('${dist}journal-file.js');
      void setWriteThread('always');
      for (let i = 0; i < 20; i++) {
        const j = new FileJournal(${JSON.stringify(dir)} + '/' + i + '.jsonl', String(i), [], () => {},
          FileJournal.record('run_start', { id: String(i) }));
        j.end('succeeded', { i });
      }
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    const files = readdirSync(dir);
    expect(files).toHaveLength(20);
    for (const f of files)
      expect(read(path.join(dir, f)).map((x) => x.type)).toEqual(['run_start', 'run_end']);
  });

  it('when the thread dies, its files and new ones are written on this thread, whole after the death', async () => {
    const dir = tempDir('hatchery-write-thread-');
    const aFile = path.join(dir, 'a.jsonl');
    const a = new FileJournal(aFile, 'a', [], () => {}, FileJournal.record('run_start', { id: 'a' }));
    a.append('note', { n: 1 });
    await a.flush();
    await killWriteThread();
    // A file the thread had open, and one made after.
    a.append('note', { n: 2 });
    const bFile = path.join(dir, 'b.jsonl');
    const b = new FileJournal(bFile, 'b', [], () => {}, FileJournal.record('run_start', { id: 'b' }));
    await Promise.all([a.end('succeeded', {}), b.end('succeeded', {})]);
    expect(read(aFile).map((r) => r.n ?? r.type)).toEqual(['run_start', 1, 2, 'run_end']);
    expect(read(bFile).map((r) => r.type)).toEqual(['run_start', 'run_end']);
    expect(a.error).toBeUndefined();
    expect(threadDrained()).toBeUndefined();
  });
});
