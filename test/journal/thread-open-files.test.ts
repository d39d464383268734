/**
 * The write thread keeps a journal's file open while its run goes on, up to a cap (a quarter of the
 * process's descriptor limit, see journal-file.ts); past it, the thread opens and closes a file per
 * write. With more journals open than the cap, the thread holds no more descriptors than the cap,
 * every file is whole and in order, and none stays open once the journals end. In a child process of
 * the built code: the thread starts with the cap of its start, once per process.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { readRecords } from './run-record.js';

const JOURNALS = 20;
const CAP = 4;
const TURNS = 5;

/** Journals JOURNALS files through a thread capped at CAP; the most of their descriptors open at once, and after. */
function inChild(dir: string): { peak: number; after: number } {
  const dist = new URL('../../dist/runtime/journal/', import.meta.url).href;
  const script = `
    import { readdirSync, readlinkSync } from 'node:fs';
    const { FileJournal } = await import('${dist}file-journal.js');
    const { setOpenFilesCap, setWriteThread, threadDrained } = await import('${dist}journal-file.js');
    const dir = ${JSON.stringify(dir)};
    // The journal files the process (its write thread included) has open now.
    const open = () => readdirSync('/proc/self/fd').filter((fd) => {
      try { return readlinkSync('/proc/self/fd/' + fd).startsWith(dir); } catch { return false; }
    }).length;
    setOpenFilesCap(${CAP});
    await setWriteThread('always');
    const journals = [];
    for (let i = 0; i < ${JOURNALS}; i++)
      journals.push(new FileJournal(dir + '/' + i + '.jsonl', String(i), [], () => {},
        FileJournal.record('run_start', { id: String(i) })));
    let peak = 0;
    for (let t = 0; t < ${TURNS}; t++) {
      for (const j of journals) j.append('note', { t });
      // Each turn's records are flushed on the next turn of the loop, then written by the thread.
      await new Promise((r) => setTimeout(r, 10));
      await threadDrained();
      peak = Math.max(peak, open());
    }
    for (const j of journals) j.end('succeeded', {});
    await new Promise((r) => setTimeout(r, 10));
    await threadDrained();
    console.log(JSON.stringify({ peak, after: open() }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { peak: number; after: number };
}

describe.runIf(process.platform === 'linux')('the write thread with more journals open than its cap', () => {
  it('keeps at most the cap of their files open, writes every file whole and in order, and closes them all', () => {
    const dir = tempDir('hatchery-thread-fds-');
    const { peak, after } = inChild(dir);
    // It does keep files open (up to the cap), and never more.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(CAP);
    expect(after).toBe(0);
    const notes = Array.from({ length: TURNS }, () => 'note');
    for (let i = 0; i < JOURNALS; i++) {
      const records = readRecords(path.join(dir, `${i}.jsonl`));
      expect(records.map((r) => r.type)).toEqual(['run_start', ...notes, 'run_end']);
      expect(records.filter((r) => r.type === 'note').map((r) => r.t)).toEqual([0, 1, 2, 3, 4]);
    }
  });
});
