/**
 * A model_call of the common shape (answered, no tool calls of its own) is written as text: the line
 * must be exactly the JSON of the record the journal builds otherwise (readers, replay and resume
 * parse it), with the same key and prompt, the same redaction and the same large-string references.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { commonModelCall } from '../../src/runtime/journal/fast-line.js';
import { FileJournal } from '../../src/runtime/journal/file-journal.js';
import { FileRunStore } from '../../src/runtime/journal/file-store.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

type ModelCall = Extract<RunEvent, { type: 'model_call' }>;

interface Internals {
  line(e: RunEvent, at: number): string | undefined;
  record(e: RunEvent, at: number): unknown;
}

const SECRET = 'sk-model-line-secret-0123456789';

/** Two journals fed the same events: one writes its lines, the other the records' JSON. */
function pair(secrets: string[]) {
  const dir = tempDir('hatchery-model-line-');
  const make = (name: string) =>
    new FileJournal(path.join(dir, name), 'id', secrets, () => {}, undefined) as unknown as Internals;
  const fast = make('a.jsonl');
  const slow = make('b.jsonl');
  let compared = 0;
  const check = (e: RunEvent, at = 1_795_405_613_114.25) => {
    if (e.type !== 'model_call') {
      fast.line(e, at);
      slow.line(e, at);
      return;
    }
    if (commonModelCall(e)) compared++;
    expect(fast.line(e, at)).toBe(JSON.stringify(slow.record(e, at)));
  };
  return { check, count: () => compared };
}

let runtime: Runtime | undefined;
afterEach(() => runtime?.close());

describe('model_call lines written as text', () => {
  it('equal the records’ JSON for the calls of runs of many shapes: drones, tool loops, secrets, large strings', async () => {
    const big = 'B'.repeat(5000);
    const model = new ScriptedProvider((req: ChatRequest) => {
      const last = String(req.messages[req.messages.length - 1]?.content ?? '');
      const tools = req.messages.filter((m) => m.role === 'tool').length;
      if (last.startsWith('loop') && tools < 2)
        return { text: '', toolCalls: [{ id: `t${tools}`, name: 'Echo', args: { input: `n${tools}` } }] };
      if (last.includes('big')) return big;
      return `answer "${last.slice(0, 20)}" é\u2028 ${SECRET}`;
    });
    const dir = tempDir('hatchery-model-line-runs-');
    runtime = new Runtime({ providers: { openai: model }, env: { OPENAI_API_KEY: SECRET }, cwd: dir });
    const files = [
      hatch([
        { name: 'A', model: 'openai:m', usr_prompt: '{{ ctx.input }}', next: 'B' },
        { name: 'B', model: 'openai:m', sys_prompt: 'be brief', usr_prompt: 'big {{ out.A }}', next: 'C' },
        { name: 'C', model: 'openai:m', sys_prompt: big, usr_prompt: 'big again {{ out.B }}', next: 'D' },
        {
          name: 'D',
          model: 'openai:m',
          sys_prompt: big,
          usr_prompt: `key ${SECRET} Bearer abcdefghijklmnop`,
        },
      ]),
      hatch([
        { name: 'Loop', sys_prompt: 'tools', usr_prompt: 'loop {{ ctx.input }}', tools: ['node:Echo'] },
        echo('Echo', 'echoed {{ ctx.input }}'),
      ]),
      hatch([
        { name: 'P', type: 'parallel', branches: ['X', 'Y'] },
        { name: 'X', model: 'openai:m', usr_prompt: 'x {{ ctx.input }}' },
        { name: 'Y', model: 'openai:m', usr_prompt: 'y' },
      ]),
    ];
    const { check, count } = pair([SECRET]);
    for (const def of files) {
      const h = load(def, dir);
      const events: RunEvent[] = [];
      await runtime.run(h, { input: 'go "q"', onEvent: (e) => events.push(e) });
      for (const e of events) check(e);
    }
    // Every drone's call and the loop's last turn (the turns with tool calls take the record path).
    expect(count()).toBeGreaterThanOrEqual(7);
  });

  it('equal them for odd values: no answer, no usage, non-finite numbers, a request with tools, a list of no tool calls', () => {
    const { check, count } = pair([SECRET]);
    const base = {
      type: 'model_call',
      runId: 'r',
      hatchery: 'h',
      node: 'N "q"',
      step: 2,
      depth: 0,
      vendor: 'openai',
      model: 'gpt "x"',
      request: { model: 'gpt "x"', messages: [{ role: 'user', content: `hi ${SECRET}` }] },
      text: 'ok',
      toolCalls: [],
      stopReason: 'end',
      usage: { inputTokens: 1, outputTokens: 2, costUsd: 0.00000525, extra: undefined },
      ms: 1.23456,
    } as unknown as ModelCall;
    for (const e of [
      base,
      { ...base, step: 3, text: undefined, usage: undefined, stopReason: undefined, toolCalls: undefined },
      { ...base, step: 4, ms: Number.POSITIVE_INFINITY, depth: Number.NaN },
      {
        ...base,
        step: 5,
        request: { ...base.request, system: 'sys', tools: [{ name: 't', description: 'd', parameters: {} }] },
      },
      { ...base, step: 6, request: { ...base.request, messages: [{ role: 'user', content: [{ a: 1 }] }] } },
    ] as ModelCall[])
      check(e, 17);
    expect(count()).toBe(5);
  });

  it('leave every other shape to the record path', () => {
    const base = {
      type: 'model_call',
      node: 'N',
      step: 1,
      depth: 0,
      vendor: 'openai',
      model: 'm',
      request: { model: 'm', messages: [] },
      ms: 1,
    };
    expect(commonModelCall(base as unknown as ModelCall)).toBe(true);
    for (const e of [
      { ...base, call: 3 },
      { ...base, retries: 1 },
      { ...base, standIn: 'openai:x' },
      { ...base, error: 'failed', code: 'PROVIDER' },
      { ...base, toolCalls: [{ id: 'a', name: 'b', args: {} }] },
      { ...base, text: 3 },
      { ...base, usage: null },
    ])
      expect(commonModelCall(e as unknown as ModelCall)).toBe(false);
  });

  it('are what a stored run holds: the call of a served one-drone run reads back whole', async () => {
    const state = tempDir();
    const store = new FileRunStore(state, { env: { OPENAI_API_KEY: SECRET } });
    const model = new ScriptedProvider(() => 'the answer');
    runtime = new Runtime({ providers: { openai: model }, env: { OPENAI_API_KEY: SECRET }, store });
    const h = load(hatch([{ name: 'Ask', model: 'openai:m', usr_prompt: `{{ ctx.input }} ${SECRET}` }]));
    const res = await runtime.run(h, { input: 'question' });
    await runtime.close();
    const stored = (await store.read(res.runId))!;
    const call = stored.records.find((r) => r.type === 'model_call')!;
    expect(call).toMatchObject({
      node: 'Ask',
      depth: 0,
      vendor: 'openai',
      model: 'm',
      step: 1,
      messages: [{ role: 'user', content: 'question [redacted]' }],
      text: 'the answer',
    });
    expect(call.key).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(stored.records)).not.toContain(SECRET);
    expect(stored.summary).toMatchObject({ status: 'succeeded', output: 'the answer', steps: 1 });
  });
});
