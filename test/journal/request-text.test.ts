/**
 * The journal keys each model call with the cassette's key (`run --replay-run` answers the call from
 * the journal by that key, and old journals keep their keys), but writes the key's text field by field
 * with each message's text kept per message object. That text must be exactly the cassette's, for
 * every request; and a request with something to redact must still be keyed as the cassette keys it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatRequestShape, redactDeep, requestKey } from '../../src/journal/canonical.js';
import { FileRunStore } from '../../src/journal/file-store.js';
import { plainFrom, RequestKeys } from '../../src/journal/request-key.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

const deep = (n: number): unknown => (n === 0 ? 'leaf' : { down: deep(n - 1), n });
class Box {
  constructor(readonly inner = 1) {}
}
const sparse: unknown[] = ['a'];
sparse[2] = 'c';

/** A request as the fields the key reads (the signal is left out of the key). */
const req = (r: Record<string, unknown>) => r as unknown as ChatRequest;

const requests: ChatRequest[] = [
  req({ model: 'm', messages: [] }),
  req({ model: 'm', system: 's', messages: [{ role: 'user', content: 'hi "there"\n\u2028 é' }] }),
  {
    model: 'gpt',
    system: 'sys',
    maxTokens: 100,
    temperature: 0.2,
    toolChoice: { type: 'tool', name: 'x' },
    tools: [{ name: 'x', description: 'd', inputSchema: { type: 'object', properties: { b: {}, a: {} } } }],
    responseSchema: { type: 'object', required: ['z', 'a'], properties: { z: { type: 'string' } } },
    messages: [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 't1', name: 'x', args: { b: [1, { y: null, x: undefined }], a: 'é' } }],
      },
      { role: 'tool', toolCallId: 't1', content: 'result' },
    ],
  } as unknown as ChatRequest,
  // Values the fast writer hands to canonicalJson: integer-like keys, class instances, a Date, deep nesting.
  {
    model: 'm',
    temperature: Number.NaN,
    messages: [
      { role: 'user', content: 'x', extra: { 10: 'ten', 2: 'two', b: 1, '1a': 2 } },
      { role: 'user', content: 'y', when: new Date(0), box: new Box(), deep: deep(50) },
      { role: 'user', content: [sparse, () => 1, Symbol('s'), undefined], f: () => 1, u: undefined },
      { role: 'user', content: 'z', '"q"': 1, 'a b': 2, é: 3 },
    ],
  } as unknown as ChatRequest,
  { model: 'm', messages: 'not a list', tools: undefined, toolChoice: 'auto' } as unknown as ChatRequest,
];

/** The journal's keys of model calls, nothing redacted; each request its own conversation (step). */
const keys = new RequestKeys(() => true, []);
let step = 0;
const callKey = (vendor: string, r: ChatRequest, at = step++) =>
  keys.key({ type: 'model_call', vendor, request: r, step: at } as never);
const cassetteKey = (vendor: string, r: ChatRequest) => requestKey(chatRequestShape(vendor, r));

describe('a model call’s key', () => {
  it('is the cassette key of chatRequestShape(...) for every request, twice (the second from the kept texts)', () => {
    for (const r of requests) {
      for (const vendor of ['openai', 'anthropic']) {
        const at = step++;
        expect(callKey(vendor, r, at).key).toBe(cassetteKey(vendor, r));
        expect(callKey(vendor, r, at).key).toBe(cassetteKey(vendor, r));
      }
    }
  });

  it('requests with only plain fields that follow each other, alike or differing in one field, get their own key', () => {
    // Every run of a drone sends the same fields: their parts are kept from one request to the next,
    // and any field that differs, by value or by type, must give that request's own text.
    const base = { model: 'gpt', system: 'sys', messages: [{ role: 'user', content: 'q' }] };
    const variants: Record<string, unknown>[] = [
      base,
      base,
      { ...base, messages: [{ role: 'user', content: 'other' }] },
      { ...base, model: 'gpt-2' },
      { ...base, system: 'sys2' },
      { ...base, system: undefined },
      { ...base, maxTokens: 10 },
      { ...base, maxTokens: '10' },
      { ...base, temperature: 0 },
      { ...base, temperature: -0 },
      { ...base, temperature: Number.NaN },
      { ...base, temperature: Number.NaN },
      { ...base, toolChoice: 'auto' },
      { ...base, toolChoice: { name: 'x' } },
      { ...base, tools: [{ name: 'x', description: 'd', inputSchema: { type: 'object' } }] },
      { ...base, responseSchema: { name: 'r', schema: { type: 'object' } } },
      { ...base, messages: 'not a list' },
      base,
    ];
    for (let round = 0; round < 2; round++) {
      for (const v of variants) {
        for (const vendor of ['openai', 'anthropic', 'openai']) {
          const r = req(v);
          expect(callKey(vendor, r).key).toBe(cassetteKey(vendor, r));
        }
      }
    }
  });

  it('a conversation that grows turn by turn keeps the same key as a fresh one', () => {
    const messages: ChatRequest['messages'] = [{ role: 'user', content: 'start' }];
    const at = step++;
    for (let turn = 0; turn < 20; turn++) {
      const r = { model: 'm', system: 's', messages: [...messages] } as ChatRequest;
      expect(callKey('openai', r, at).key).toBe(cassetteKey('openai', r));
      messages.push({ role: 'assistant', content: `turn ${turn}` } as never);
    }
  });

  it('marks plain JSON messages plain, and values a cleaned copy could write differently not', () => {
    const plain = (m: unknown) => callKey('openai', { model: 'm', messages: [m] } as ChatRequest).plain;
    expect(plainFrom(requests[2]!.messages, 0)).toBe(true);
    const [ints, odd, skipped, keys] = requests[3]!.messages;
    // A Date (JSON writes its toJSON), a class instance, 50 levels deep; integer keys, to be safe.
    expect(plain(ints)).toBe(false);
    expect(plain(odd)).toBe(false);
    // Functions, symbols and undefined are left out (or null in arrays) by both.
    expect(plain(skipped)).toBe(true);
    expect(plain(keys)).toBe(true);
  });

  it('is the cassette key in the journal, also for requests holding secrets or key shapes', async () => {
    const dir = tempDir('hatchery-request-text-');
    const env = { OPENAI_API_KEY: 'sk-env-secret-value-123456', MY_TOKEN: 'tok-"quoted"\\-secret' };
    const store = new FileRunStore(path.join(dir, 'runs'), { env });
    const runtime = new Runtime({
      providers: { openai: new ScriptedProvider(() => 'ok') },
      env,
      store,
      cwd: dir,
    });
    const prompts = [
      'plain prompt',
      'my key is sk-abcdefghijkl',
      'header: Bearer\nabc.def',
      'line\nBasic\tdXNlcjpw',
      'token tok-"quoted"\\-secret here',
    ];
    const h = load(hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: '{{ ctx.input }}' }]), dir);
    for (const p of prompts) {
      const r = await runtime.run(h, { input: p });
      await store.idle();
      const text = readFileSync(path.join(dir, 'runs', `${r.runId}.jsonl`), 'utf8');
      const call = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((x) => x.type === 'model_call')!;
      const request = req({
        model: 'gpt-test',
        system: call.system as string,
        messages: [{ role: 'user', content: p }],
      });
      const shaped = chatRequestShape('openai', request);
      expect(call.key).toBe(requestKey(redactDeep(shaped, Object.values(env))));
      // Nothing secret is written.
      for (const secret of ['sk-abcdefghijkl', 'abc.def', 'dXNlcjpw', 'tok-"quoted"\\-secret']) {
        expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
      }
    }
    await runtime.close();
    await store.close();
  });
});

describe('the keys of a tool loop, hashed turn by turn', () => {
  /** Runs `nodes` journaled and gives each model call's journal key beside the cassette's key of what the model got. */
  async function keysOf(nodes: unknown[], reply: (messages: number) => unknown) {
    const dir = tempDir('hatchery-loop-keys-');
    const env = { OPENAI_API_KEY: 'sk-env-secret-value-123456' };
    const store = new FileRunStore(path.join(dir, 'runs'), { env });
    const expected: string[] = [];
    const model = new ScriptedProvider((r: ChatRequest) => {
      // The cassette's key of the request as the model got it (a JSON copy: later turns add to it).
      const shaped = JSON.parse(JSON.stringify(chatRequestShape('openai', r))) as Record<string, unknown>;
      expected.push(requestKey(redactDeep(shaped, Object.values(env))));
      return reply(r.messages.length) as never;
    });
    const runtime = new Runtime({ providers: { openai: model }, env, store, cwd: dir });
    const r = await runtime.run(load(hatch(nodes), dir), { input: 'go' });
    await store.idle();
    const records = readFileSync(path.join(dir, 'runs', `${r.runId}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    await runtime.close();
    await store.close();
    return { got: records.filter((x) => x.type === 'model_call').map((x) => x.key), expected };
  }

  const loop = (name: string, next?: string) => ({
    name,
    model: 'openai:gpt-test',
    usr_prompt: `{{ ctx.input }} ${name}`,
    tools: ['echo'],
    max_turns: 40,
    ...(next ? { next } : {}),
  });

  it('every turn of two 25-turn loops has the cassette key of its whole request', async () => {
    const { got, expected } = await keysOf([loop('A', 'B'), loop('B')], (n) =>
      n < 50 ? { text: '', toolCalls: [{ name: 'echo', args: { text: `turn ${n}` } }] } : 'done',
    );
    expect(expected.length).toBe(52);
    expect(got).toEqual(expected);
  });

  it('a turn whose tool result holds a key shape is keyed as the cassette keys it, and so are the turns after it', async () => {
    const { got, expected } = await keysOf([loop('A')], (n) =>
      n < 20
        ? { text: '', toolCalls: [{ name: 'echo', args: { text: n === 9 ? 'sk-abcdefghijklmn' : `t${n}` } }] }
        : 'done',
    );
    expect(expected.length).toBe(11);
    expect(got).toEqual(expected);
  });
});
