/**
 * A new run's first line (run_start) is written from text kept per loaded file (its name, file, hash
 * and node hashes) plus the run's own fields. It must be exactly the line the general record path
 * writes for the same fields: same fields and order, secrets redacted the same way (in the shared
 * part too, per secret list), credential fields dropped, a large input written once and referenced
 * after, and any other shape (a budget, a trace, another field order) left to the general path.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileJournal } from '../../src/runtime/journal/file-journal.js';
import { tempDir } from '../helpers.js';

const big = `${'x'.repeat(5000)} my-secret`;
const nodes = Object.freeze({ A: '0123456789abcdef', B: 'my-secret', C: 'q"uo\\te' });
const base = () => ({
  id: '6f1c3a52-8a9e-4c1d-9d51-2a7f0e4b9c11',
  hatchery: 'ask_hatch',
  file: '/served/a "quoted" file\\name.json',
  hash: '977a103dea626d48',
  nodes,
  source: 'mcp',
  startedAt: 1_795_419_549_932,
  owner: { pid: 3634, host: 'vm', since: 1_795_419_549_621 },
});

/** Field sets of a run_start: the common shapes and the ones the kept text must not take. */
const variants: [string, Record<string, unknown>][] = [
  ['no input, no vars', base()],
  ['input and empty vars', { ...base(), input: 'm0', vars: {} }],
  ['a secret in the input', { ...base(), input: 'say my-secret twice', vars: {} }],
  ['a large input', { ...base(), input: big, vars: {} }],
  [
    'vars with a credential field',
    { ...base(), input: 'a', vars: { k: 'v', apiKey: 'dropped', s: 'my-secret' } },
  ],
  ['vars and no input', { ...base(), vars: { k: 'v' } }],
  ['an undefined input', { ...base(), input: undefined, vars: {} }],
  [
    'a secret in the name, file and host',
    {
      ...base(),
      hatchery: 'my-secret-hatch',
      file: '/my-secret/a.json',
      owner: { pid: 1, host: 'my-secret.local', since: 2 },
    },
  ],
  ['a large file path', { ...base(), file: `/${'d'.repeat(5000)}.json`, input: big }],
  ['a budget', { ...base(), input: 'b', vars: {}, budget: { max_usd: 1 } }],
  ['a trace', { ...base(), input: 'b', vars: {}, trace: { traceparent: '00-a-b-01' } }],
  ['another order', { ...base(), vars: {}, input: 'c' }],
  ['an owner of another shape', { ...base(), owner: { pid: 1, host: 'h', since: 2, extra: true } }],
  ['a number as input', { ...base(), input: 42 }],
  ['a start that is not a number', { ...base(), startedAt: Number.NaN, input: 'n' }],
  ['nodes not frozen', { ...base(), nodes: { A: 'a', B: 'my-secret' }, input: 'd' }],
];

/** The lines a journal writes for `fields` as its first record of type `type`, times set to 0. */
async function lines(
  dir: string,
  name: string,
  type: string,
  fields: Record<string, unknown>,
  secrets: string[],
) {
  const file = path.join(dir, `${name}.jsonl`);
  const j = new FileJournal(file, 'x', secrets, () => {}, FileJournal.record(type, fields));
  // A later record holding the same large string is written as a reference to the first copy.
  j.append('note', { again: fields.input });
  await j.end('succeeded', { output: 'done' });
  return readFileSync(file, 'utf8')
    .replace(/"at":\d+/g, '"at":0')
    .split('\n');
}

describe('the run_start line from kept text', () => {
  it('is the line of the general record path, for every shape and secret list, run after run', async () => {
    const dir = tempDir('hatchery-run-start-');
    let n = 0;
    for (let round = 0; round < 2; round++) {
      for (const secrets of [[], ['my-secret'], ['my-secret', 'q"uo\\te']]) {
        for (const [what, fields] of variants) {
          // The general path: the same fields under another record type (which nothing writes from kept text).
          const general = await lines(dir, `${n++}`, 'start', fields, secrets);
          const kept = await lines(dir, `${n++}`, 'run_start', fields, secrets);
          expect(kept[0], what).toBe(general[0]!.replace('"type":"start"', '"type":"run_start"'));
          expect(kept.slice(1), what).toEqual(general.slice(1));
          for (const s of secrets) expect(kept.join('\n'), what).not.toContain(s);
        }
      }
    }
  });

  it('writes a large input once, then refers to it', async () => {
    const dir = tempDir('hatchery-run-start-');
    const kept = await lines(dir, 'a', 'run_start', { ...base(), input: big, vars: {} }, []);
    expect(JSON.parse(kept[0]!).input).toBe(big);
    expect(JSON.parse(kept[1]!).again).toEqual({ $same: expect.any(String) });
  });
});
