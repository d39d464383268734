/**
 * Multi-byte text, very long lines and many lines must land whole and in order, and a journal whose
 * write fails must lose its own lines only, never pass them to another journal's file.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { readRecords, startedJournal } from './run-record.js';

const read = readRecords;

describe('journal writes', () => {
  it('writes multi-byte text, very long lines and many lines whole and in order', async () => {
    const dir = tempDir('hatchery-journal-write-');
    const file = path.join(dir, 'a.jsonl');
    const j = startedJournal(file, 'a');
    const long = 'é🐝'.repeat(30_000);
    const huge = 'x'.repeat(3_000_000);
    const texts = ['plain', 'é à ü', '蜂の巣', '🐝🐝', long, 'between', huge, 'after'];
    for (const t of texts) j.append('note', { text: t });
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
    // Both end in the same turn.
    await Promise.all([a.end('succeeded', {}), b.end('succeeded', {})]);
    expect(String(a.error)).toMatch(/ENOENT/);
    expect(b.error).toBeUndefined();
    const recs = read(bFile);
    expect(recs).toHaveLength(52);
    expect(recs.filter((r) => r.type === 'note').every((r) => r.from === 'b')).toBe(true);
  });
});
