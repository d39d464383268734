/**
 * A flush encodes its lines into one buffer shared by every journal (flushes run one at a time) and
 * writes it in pieces: multi-byte text, lines longer than a piece, and many pieces must land whole and
 * in order, and a journal whose write fails must lose its own lines only, never pass them to the next
 * journal's file.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWriteThread } from '../../src/runtime/journal/journal-file.js';
import { tempDir } from '../helpers.js';
import { readRecords, startedJournal } from './run-record.js';

const read = readRecords;

// On this thread (a command line's few runs) and through the write thread (a busy process's).
describe.each(['never', 'always'] as const)('journal writes, write thread %s', (mode) => {
  beforeAll(() => setWriteThread(mode));
  afterAll(() => setWriteThread(undefined));

  it('writes multi-byte text, lines longer than a piece and than the ring, and many pieces whole and in order', async () => {
    const dir = tempDir('hatchery-journal-write-');
    const file = path.join(dir, 'a.jsonl');
    const j = startedJournal(file, 'a');
    const long = 'é🐝'.repeat(30_000); // 90,000 UTF-16 units, 180,000 bytes: longer than a piece
    // Longer than the write thread's 2 MiB ring: written as the thread frees room.
    const huge = 'x'.repeat(3_000_000);
    const texts = ['plain', 'é à ü', '蜂の巣', '🐝🐝', long, 'between', huge, 'after'];
    for (const t of texts) j.append('note', { text: t });
    // Enough lines for several pieces of 64 KB.
    for (let i = 0; i < 3000; i++) j.append('note', { i, text: `line ${i} ${'ü'.repeat(20)}` });
    await j.end('succeeded', {});
    const recs = read(file);
    expect(recs[0]?.type).toBe('run_start');
    expect(recs.slice(1, 9).map((r) => r.text)).toEqual(texts);
    expect(recs.slice(9, 3009).map((r) => r.i)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect(recs.at(-1)?.type).toBe('run_end');
    expect(j.error).toBeUndefined();
  });

  it('a journal that cannot write loses its own lines only, in the same turn as another', async () => {
    const dir = tempDir('hatchery-journal-write-');
    const gone = path.join(dir, 'gone');
    mkdirSync(gone);
    const a = startedJournal(path.join(gone, 'a.jsonl'), 'a');
    const bFile = path.join(dir, 'b.jsonl');
    const b = startedJournal(bFile, 'b');
    rmSync(gone, { recursive: true });
    for (let i = 0; i < 50; i++) {
      a.append('note', { from: 'a', i });
      b.append('note', { from: 'b', i });
    }
    // Both end in the same turn: one flush after the other, through the shared buffer.
    await Promise.all([a.end('succeeded', {}), b.end('succeeded', {})]);
    expect(String(a.error)).toMatch(/ENOENT/);
    expect(b.error).toBeUndefined();
    const recs = read(bFile);
    expect(recs).toHaveLength(52);
    expect(recs.filter((r) => r.type === 'note').every((r) => r.from === 'b')).toBe(true);
  });
});
