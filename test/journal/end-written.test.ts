/**
 * A run's last records are written on the turn after its end, and whoever waits (end()'s caller, the
 * store's read, list, reopen and close) waits for that write. What is on disk when must not change: once any of them resolves, the run's
 * file ends with its run_end, in any order of ends, stores and turns.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';
import { startedJournal } from './run-record.js';

/** The type of the last line of a file. */
const lastType = (file: string): string | undefined =>
  (JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!) as { type?: string }).type;

let runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.map((r) => r.close()));
  runtimes = [];
});

describe('the last write of ended journals', () => {
  it('end() resolves once the file holds the run_end, for journals ending in the same turn and in later ones', async () => {
    const dir = tempDir('hatchery-due-');
    const files = Array.from({ length: 5 }, (_, i) => path.join(dir, `${i}.jsonl`));
    const journals = files.map((f, i) => startedJournal(f, `${i}`));
    const first = journals.slice(0, 3).map((j) => j.end('succeeded', { output: 'a' }));
    await Promise.all(first);
    for (const f of files.slice(0, 3)) expect(lastType(f)).toBe('run_end');
    journals[3]!.append('note', { n: 1 });
    const fourth = journals[3]!.end('failed', { error: 'x' });
    const fifth = journals[4]!.end('succeeded', {});
    await fourth;
    expect(lastType(files[3]!)).toBe('run_end');
    expect(lastType(files[4]!)).toBe('run_end');
    await fifth;
    // A second end() changes nothing.
    await journals[0]!.end('failed', {});
    expect(lastType(files[0]!)).toBe('run_end');
  });

  it('the store reads a run just ended whole, and close() leaves every file of a burst ended, with two stores', async () => {
    const model = new ScriptedProvider(
      (r: { messages: { content: unknown }[] }) => `echo ${r.messages[0]?.content}`,
    );
    const h = load(hatch([{ name: 'Ask', model: 'openai:m', usr_prompt: '{{ ctx.input }}' }]));
    const stores = [0, 1].map(() => new FileRunStore(tempDir(), { env: {} }));
    runtimes = stores.map((store) => new Runtime({ providers: { openai: model }, env: {}, store }));
    const one = await runtimes[0]!.run(h, { input: 'first' });
    // Read in the turn the run ended in: the read waits for the last write.
    const stored = await stores[0]!.read(one.runId);
    expect(stored?.summary).toMatchObject({ status: 'succeeded', output: 'echo first' });
    expect(stored?.records.at(-1)?.type).toBe('run_end');
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => runtimes[i % 2]!.run(h, { input: `m${i}` })),
    );
    await Promise.all(stores.map((s) => s.close()));
    results.forEach((r, i) => {
      const file = path.join(stores[i % 2]!.location, `${r.runId}.jsonl`);
      expect(lastType(file)).toBe('run_end');
    });
    const listed = await stores[1]!.list({ limit: 100 });
    expect(listed).toHaveLength(30);
    expect(listed.every((s) => s.status === 'succeeded')).toBe(true);
  });
});
