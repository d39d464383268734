import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatMessage, ChatRequest } from '../../src/providers/types.js';

function request(content: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'm',
    system: 's',
    messages: [{ role: 'user', content }],
    signal: new AbortController().signal,
    ...extra,
  };
}

afterEach(() => vi.restoreAllMocks());

describe('ScriptedProvider', () => {
  it('answers from the array in order, with default ids and usage', async () => {
    const model = new ScriptedProvider([
      'first',
      { text: '', toolCalls: [{ name: 'search', args: { q: 'x' } }], stopReason: 'tool_use' },
      { text: 'third', usage: { inputTokens: 10, outputTokens: 3 } },
    ]);
    expect(await model.chat(request('a'))).toEqual({
      text: 'first',
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
    });
    expect(await model.chat(request('b'))).toEqual({
      text: '',
      toolCalls: [{ id: 'call_1_0', name: 'search', args: { q: 'x' } }],
      usage: { inputTokens: 1, outputTokens: 1 },
      stopReason: 'tool_use',
    });
    expect((await model.chat(request('c'))).usage).toEqual({ inputTokens: 10, outputTokens: 3 });
    expect(model.remaining).toBe(0);
    expect(model.calls.map((c) => c.messages[0]?.content)).toEqual(['a', 'b', 'c']);
  });

  it('throws a clear error when the script is exhausted', async () => {
    const model = new ScriptedProvider(['only']);
    await model.chat(request('a'));
    const err = (await model.chat(request('second question')).catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('no reply left for call #2');
    expect(err.message).toContain('second question');
  });

  it('throws scripted Errors', async () => {
    const model = new ScriptedProvider([new Error('rate limited'), 'ok']);
    await expect(model.chat(request('a'))).rejects.toThrow('rate limited');
    expect((await model.chat(request('b'))).text).toBe('ok');
  });

  it('accepts a function of the request and call index, sync or async', async () => {
    const model = new ScriptedProvider(async (req, i) => `${i}:${req.messages[0]?.content}`);
    expect((await model.chat(request('x'))).text).toBe('0:x');
    expect((await model.chat(request('y'))).text).toBe('1:y');
    expect(model.remaining).toBe(Number.POSITIVE_INFINITY);
  });

  it('accepts functions as array entries and the options-object form', async () => {
    const model = new ScriptedProvider({
      replies: ['plain', (req) => ({ text: `fn:${req.model}` })],
      usage: { inputTokens: 5, outputTokens: 2 },
    });
    expect(await model.chat(request('a'))).toMatchObject({ text: 'plain', usage: { inputTokens: 5 } });
    expect((await model.chat(request('b'))).text).toBe('fn:m');
    const single = new ScriptedProvider({ reply: () => 'r' });
    expect((await single.chat(request('a'))).text).toBe('r');
  });

  it('records requests with a copy of the messages array', async () => {
    const model = new ScriptedProvider(['a', 'b']);
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    await model.chat({ ...request(''), messages });
    messages.push({ role: 'assistant', content: 'a' });
    expect(model.calls[0]!.messages).toHaveLength(1);
  });

  it('sends the text to onDelta when streaming', async () => {
    const deltas: string[] = [];
    await new ScriptedProvider(['streamed']).chat(
      request('a', { stream: true, onDelta: (t) => deltas.push(t) }),
    );
    expect(deltas).toEqual(['streamed']);
  });

  it('waits delayMs and rejects with ABORTED as soon as the signal fires', async () => {
    const model = new ScriptedProvider(['late'], { delayMs: 10_000 });
    const ctrl = new AbortController();
    const call = model.chat(request('a', { signal: ctrl.signal })).catch((e: unknown) => e);
    ctrl.abort();
    // Rejected well inside the 10 s delay (the test's own timeout is less).
    expect(((await call) as HatcheryError).code).toBe('ABORTED');
  });

  it('delays by delayMs', async () => {
    const t0 = Date.now();
    await new ScriptedProvider({ reply: () => 'x', delayMs: 30 }).chat(request('a'));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
  });

  it('rejects with ABORTED when the signal already fired', async () => {
    const err = (await new ScriptedProvider(['x'])
      .chat(request('a', { signal: AbortSignal.abort() }))
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('ABORTED');
  });

  it('uses no timers without delayMs and keeps no call records when told not to', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const model = new ScriptedProvider(() => 'ok', { record: false });
    const signal = new AbortController().signal;
    const req = request('a', { signal });
    for (let i = 0; i < 10_000; i++) await model.chat(req);
    expect(spy).not.toHaveBeenCalled();
    expect(model.calls).toHaveLength(0);
    expect(model.callCount).toBe(10_000);
  });
});
