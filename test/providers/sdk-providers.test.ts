/**
 * What every SDK vendor's provider does, through its real SDK against its fake server: replies,
 * streams, tool calls, retries, cancellation, timeouts, errors without keys. The wire format each
 * vendor sends is checked in wire-openai.test.ts and wire-anthropic.test.ts.
 */
import { getEventListeners } from 'node:events';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatRequest, RetryInfo } from '../../src/providers/types.js';
import { chatRequest, failure, vendorCases, weather } from './helpers.js';

const cases = vendorCases();

describe.each(cases)('$vendor.name provider through the real SDK', (v) => {
  const { fake } = v;
  const request = (extra: Partial<ChatRequest> = {}) => chatRequest(v.model, extra);
  beforeEach(() => fake.reset());

  it('returns text, usage and stop reason, sending the key to the vendor path', async () => {
    fake.enqueue({ text: 'Hello!', usage: { input: 12, output: 3 } });
    const res = await v.make().chat(request());
    expect(res).toEqual({
      text: 'Hello!',
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 3 },
      stopReason: v.vendor.textStop,
    });
    const seen = fake.requests[0]!;
    expect(seen.path).toBe(v.path);
    expect(`${seen.headers.authorization} ${seen.headers['x-api-key']}`).toContain(v.key);
    expect(seen.body.stream).toBeUndefined();
  });

  it('answers with a deterministic echo when nothing is scripted', async () => {
    const res = await v.make().chat(request());
    expect(res.text).toBe('echo: Say hello');
    expect(res.usage.inputTokens).toBeGreaterThan(0);
  });

  it('streams text fragments to onDelta, with usage and stop reason', async () => {
    fake.enqueue({ text: 'one two three', usage: { input: 9, output: 4 } });
    const deltas: string[] = [];
    const res = await v.make().chat(request({ stream: true, onDelta: (t) => deltas.push(t) }));
    expect(res).toEqual({
      text: 'one two three',
      toolCalls: [],
      usage: { inputTokens: 9, outputTokens: 4 },
      stopReason: v.vendor.textStop,
    });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('one two three');
    expect(fake.requests[0]!.body.stream).toBe(true);
  });

  it.each([false, true])('returns the tool calls the model makes (stream %s)', async (stream) => {
    fake.enqueue({
      text: 'Checking.',
      toolCalls: [
        { name: 'get_weather', args: { city: 'Paris' } },
        { name: 'get_weather', args: { city: 'Lima' } },
      ],
    });
    const res = await v.make().chat(request({ stream, tools: [weather] }));
    expect(res.text).toBe('Checking.');
    expect(res.toolCalls.map((c) => [c.name, c.args])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_weather', { city: 'Lima' }],
    ]);
    expect(new Set(res.toolCalls.map((c) => c.id)).size).toBe(2);
    expect(res.stopReason).toBe(v.toolStop);
  });

  it('asks for structured output and answers with the schema-shaped default reply', async () => {
    const schema = { type: 'object', properties: { title: { type: 'string' }, score: { type: 'integer' } } };
    const res = await v.make().chat(request({ responseSchema: { name: 'out', schema } }));
    expect(JSON.parse(res.text)).toEqual({ title: 'echo: Say hello', score: 0 });
  });

  it('retries a 500 and succeeds', async () => {
    fake.enqueue({ status: 500, message: 'upstream broke' }, 'recovered');
    expect((await v.make().chat(request())).text).toBe('recovered');
    expect(fake.requests).toHaveLength(2);
  });

  it('waits what retry-after-ms on a 429 asks before retrying', async () => {
    fake.enqueue({ status: 429, message: 'slow down', headers: { 'retry-after-ms': '150' } }, 'ok');
    const retries: RetryInfo[] = [];
    expect((await v.make().chat(request({ onRetry: (r) => retries.push(r) }))).text).toBe('ok');
    expect(retries).toMatchObject([{ attempt: 1, waitMs: 150, rateLimited: true }]);
    expect(fake.requests).toHaveLength(2);
  });

  it('does not retry a 400 and reports PROVIDER with the status and the API message', async () => {
    fake.enqueue({ status: 400, message: "model 'nope' does not exist" });
    const err = await failure(v.make().chat(request()));
    expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 400 } });
    expect(err.message).toBe(`${v.vendor.name} API error 400: model 'nope' does not exist`);
    expect(fake.requests).toHaveLength(1);
  });

  it('gives up after maxRetries with the last status', async () => {
    fake.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
    const err = await failure(v.make({ maxRetries: 1 }).chat(request()));
    expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 503 } });
    expect(fake.requests).toHaveLength(2);
  });

  it.each([false, true])(
    'cancels an in-flight call and closes its connection (stream %s)',
    async (stream) => {
      fake.enqueue({ text: 'too late', delayMs: 5000 });
      const ctrl = new AbortController();
      const call = failure(v.make().chat(request({ stream, signal: ctrl.signal })));
      await vi.waitFor(() => expect(fake.requests).toHaveLength(1), { timeout: 10_000 });
      ctrl.abort();
      expect((await call).code).toBe('ABORTED');
      // The fake was still waiting to answer: it saw the client hang up.
      await vi.waitFor(() => expect(fake.requests[0]!.disconnected).toBe(true));
      expect(fake.requests).toHaveLength(1);
    },
  );

  it('cancels in the middle of a stream', async () => {
    fake.enqueue({ text: 'a b c d e f', chunkDelayMs: 300 });
    const ctrl = new AbortController();
    const deltas: string[] = [];
    const onDelta = (t: string) => {
      deltas.push(t);
      ctrl.abort();
    };
    const err = await failure(v.make().chat(request({ stream: true, signal: ctrl.signal, onDelta })));
    expect(err.code).toBe('ABORTED');
    expect(deltas).toEqual(['a ']);
    await vi.waitFor(() => expect(fake.disconnects).toBe(1));
  });

  it('cancels during the wait before a retry (the SDK sleep ignores signals)', async () => {
    fake.enqueue({ status: 503, headers: { 'retry-after-ms': '60000' } }, 'never sent');
    const ctrl = new AbortController();
    const call = failure(v.make().chat(request({ signal: ctrl.signal, onRetry: () => ctrl.abort() })));
    expect((await call).code).toBe('ABORTED');
    expect(fake.requests).toHaveLength(1);
    expect(fake.pending).toBe(1);
  });

  it('rejects at once when the signal already fired, without a request', async () => {
    const err = await failure(v.make().chat(request({ signal: AbortSignal.abort() })));
    expect(err.code).toBe('ABORTED');
    expect(fake.requests).toHaveLength(0);
  });

  it('times out an attempt with TIMEOUT, hanging up on the fake before it answers', async () => {
    fake.enqueue({ text: 'late', delayMs: 5000 });
    const err = await failure(v.make({ maxRetries: 0 }).chat(request({ timeoutMs: 100 })));
    expect(err).toMatchObject({ code: 'TIMEOUT', message: `${v.vendor.name} call timed out after 100 ms` });
    await vi.waitFor(() => expect(fake.requests[0]?.disconnected).toBe(true));
  });

  it('bounds all attempts with the timeout: a slow attempt leaves no time for a retry', async () => {
    fake.enqueue({ text: 'late', delayMs: 5000 }, 'in time');
    const err = await failure(v.make({ maxRetries: 1 }).chat(request({ timeoutMs: 100 })));
    expect(err).toMatchObject({ code: 'TIMEOUT', message: `${v.vendor.name} call timed out after 100 ms` });
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    expect(fake.pending).toBe(1);
  });

  it('times out a stream that stalls after the headers', async () => {
    fake.enqueue({ text: 'a b c', chunkDelayMs: 3000 });
    const err = await failure(v.make({ maxRetries: 0 }).chat(request({ stream: true, timeoutMs: 150 })));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain('stalled');
  });

  it('never puts the API key in error messages, even when the server echoes it', async () => {
    for (const key of [v.key, 'proj-opaque-key-0123456789']) {
      fake.enqueue((_body, req) => {
        const sent = req.headers['x-api-key'] || req.headers.authorization?.slice(7);
        return { status: 401, message: `Incorrect API key: ${req.headers.authorization} (${sent})` };
      });
      const err = await failure(v.make({ apiKey: key, maxRetries: 0 }).chat(request()));
      expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 401 } });
      const shown = `${err.message} ${String(err)} ${JSON.stringify(err.context)} ${String(err.cause ?? '')}`;
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(key.slice(8));
      expect(err.message).toContain('Incorrect API key');
      expect(err.message).toContain('check the API key');
    }
  });

  it('reports an unreachable server as PROVIDER naming it and the base-URL variable', async () => {
    const url = fake.baseURL.replace(/:\d+/, ':1');
    const err = await failure(v.make({ baseURL: url, maxRetries: 0 }).chat(request()));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain(url);
    expect(err.message).toContain('base URL');
    expect(err.message).toContain(v.vendor.baseUrlVar);
    expect(err.message).not.toContain(v.key);
  });

  it('leaves no abort listeners on a long-lived run signal', async () => {
    const ctrl = new AbortController();
    const p = v.make();
    for (let i = 0; i < 15; i++) await p.chat(request({ signal: ctrl.signal, stream: i % 2 === 0 }));
    fake.enqueue({ status: 400 });
    await failure(p.chat(request({ signal: ctrl.signal })));
    expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(0);
  });
});
