/**
 * node_start and node_end lines are written as text in their common shape: each must be exactly the
 * JSON of the record the journal builds otherwise (readers, resume and `runs show` parse these lines),
 * for the events of real runs of every shape and for odd values.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { fastLine } from '../../src/runtime/journal/fast-line.js';
import { FileJournal } from '../../src/runtime/journal/file-journal.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

interface Internals {
  record(e: RunEvent, at: number): unknown;
  str(s: string | undefined): unknown;
}

/** Two journals fed the same events: one writes the fast text, the other the record's JSON. */
function pair(secrets: string[] = []) {
  const dir = tempDir('hatchery-fast-line-');
  const make = (name: string) =>
    new FileJournal(path.join(dir, name), 'id', secrets, () => {}, undefined) as unknown as Internals;
  const fast = make('a.jsonl');
  const slow = make('b.jsonl');
  let compared = 0;
  const check = (e: RunEvent, at = 1_795_405_613_114) => {
    const text = fastLine(e, at, (s) => fast.str(s) as never);
    const json = JSON.stringify(slow.record(e, at));
    // Other records go through the record path in both, so both remember the same large strings.
    if (text === undefined) {
      fast.record(e, at);
      return;
    }
    compared++;
    expect(text).toBe(json);
  };
  return { check, count: () => compared };
}

describe('node records written as text', () => {
  it('equal the records’ JSON for every node_start and node_end of runs of many shapes', async () => {
    const dir = tempDir('hatchery-fast-line-runs-');
    const big = 'B'.repeat(5000);
    const model = new ScriptedProvider((r: { messages: { content: unknown }[] }) => {
      const last = String(r.messages[r.messages.length - 1]?.content ?? '');
      if (last === 'json') return '{"a":"b"}';
      return last.includes('big') ? big : `answer "${last.slice(0, 20)}" é\n`;
    });
    const runtime = new Runtime({ providers: { openai: model }, env: {}, cwd: dir });
    const files = [
      hatch([
        { name: 'A', model: 'openai:m', usr_prompt: '{{ ctx.input }}', next: 'B' },
        { name: 'B', model: 'openai:m', usr_prompt: 'big {{ out.A }}', next: 'C' },
        { name: 'C', model: 'openai:m', usr_prompt: 'big again {{ out.B }}' },
      ]),
      hatch([
        { name: 'P', type: 'parallel', branches: ['X', 'Y'], next: 'M' },
        { name: 'X', model: 'openai:m', usr_prompt: 'x' },
        { name: 'Y', model: 'openai:m', usr_prompt: 'y' },
        { name: 'M', type: 'map', items: '["a","b"]', node: 'Item', next: 'S' },
        { name: 'Item', model: 'openai:m', usr_prompt: 'item {{ ctx.item }}' },
        {
          name: 'S',
          model: 'openai:m',
          usr_prompt: 'json',
          output_schema: { type: 'object', properties: { a: { type: 'string' } } },
        },
      ]),
    ];
    const { check, count } = pair();
    for (const def of files) {
      const h = load(def, dir);
      const events: RunEvent[] = [];
      await runtime.run(h, { input: 'go', onEvent: (e) => events.push(e) });
      for (const e of events) check(e);
    }
    expect(count()).toBeGreaterThan(6);
    await runtime.close();
  });

  it('equal them for odd values: no output, a null next, non-finite numbers, escapes, secrets, repeated large outputs', () => {
    const { check, count } = pair(['topsecret-value-1234']);
    const end = {
      type: 'node_end',
      node: 'N "q" \u2028',
      step: 3,
      depth: 0,
      output: 'the key topsecret-value-1234 and sk-abcdefghijkl',
      usage: { inputTokens: 1, outputTokens: 2, costUsd: 0.00000525 },
      ms: 1.23456,
      path: '',
      seq: 3,
      next: null,
    } as unknown as RunEvent;
    const large = { ...end, output: 'L'.repeat(5000), next: 'Next' } as RunEvent;
    for (const e of [
      { type: 'node_start', node: 'N\n', kind: 'drone', step: 1, depth: 0 },
      { type: 'node_start', node: 'N', kind: 'drone', step: Number.NaN, depth: 0 },
      end,
      { ...end, output: undefined, usage: undefined, next: undefined },
      { ...end, ms: Number.POSITIVE_INFINITY, step: -0 },
      large,
      large,
      { ...end, usage: { inputTokens: 1, extra: undefined } },
      { ...end, usage: { inputTokens: Number.NaN, costUsd: -0 } },
    ] as unknown as RunEvent[])
      check(e, 17);
    expect(count()).toBe(9);
  });

  it('leave every other shape to the record path', () => {
    const base = { type: 'node_end', node: 'N', step: 1, depth: 0, output: 'o', ms: 1, path: '', seq: 1 };
    for (const e of [
      { ...base, depth: 1, hatchery: 'h' },
      { ...base, value: { a: 1 } },
      { ...base, chose: 'B' },
      { ...base, parent: 2 },
      { ...base, call: 'c1' },
      { type: 'node_start', node: 'N', kind: 'drone', step: 1, depth: 0, item: 0 },
      // JSON.stringify would throw on these after str() remembered the output: the record path takes them.
      { ...base, usage: { inputTokens: 1n } },
      { ...base, usage: { toJSON: () => ({}) } },
      { ...base, usage: new Map() },
      { type: 'model_call' },
    ] as unknown as RunEvent[])
      expect(fastLine(e, 1, (s) => s)).toBeUndefined();
  });
});
