import { getEventListeners } from 'node:events';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { chatRequest, failure, weather } from './helpers.js';

const KEY = 'sk-test-SECRET0123456789abcdef';
const fake = new FakeOpenAI();
let client: OpenAI;

const provider = (options: ConstructorParameters<typeof OpenAIProvider>[1] = {}, clientOptions = {}) =>
  new OpenAIProvider(
    new OpenAI({ apiKey: KEY, baseURL: fake.baseURL, maxRetries: 2, ...clientOptions }),
    options,
  );

const request = (extra: Partial<ChatRequest> = {}) => chatRequest('gpt-test', extra);

beforeAll(async () => {
  await fake.start();
  client = new OpenAI({ apiKey: KEY, baseURL: fake.baseURL });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('OpenAIProvider through the real SDK', () => {
  it('sends the system prompt first and returns text, usage and stop reason', async () => {
    fake.enqueue({ text: 'Hello!', usage: { input: 12, output: 3 } });
    const res = await new OpenAIProvider(client).chat(request({ temperature: 0.2, maxTokens: 50 }));
    expect(res).toEqual({
      text: 'Hello!',
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 3 },
      stopReason: 'stop',
    });
    const seen = fake.requests[0]!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.body).toMatchObject({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hello' },
      ],
      temperature: 0.2,
      // A compatible (non-api.openai.com) server gets the widely supported field.
      max_tokens: 50,
    });
    expect(seen.body.stream).toBeUndefined();
    expect(seen.body.tools).toBeUndefined();
  });

  it('uses max_completion_tokens when told to (api.openai.com does by default)', async () => {
    await provider({ maxTokensField: 'max_completion_tokens' }).chat(request({ maxTokens: 7 }));
    expect(fake.requests[0]!.body).toMatchObject({ max_completion_tokens: 7 });
    expect(fake.requests[0]!.body.max_tokens).toBeUndefined();
  });

  it('streams text fragments to onDelta and takes usage from the final chunk', async () => {
    fake.enqueue({ text: 'one two three', usage: { input: 9, output: 4 } });
    const deltas: string[] = [];
    const res = await provider().chat(request({ stream: true, onDelta: (t) => deltas.push(t) }));
    expect(res.text).toBe('one two three');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('one two three');
    expect(res.usage).toEqual({ inputTokens: 9, outputTokens: 4 });
    expect(res.stopReason).toBe('stop');
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('round-trips tool calls: specs and choice out, parsed calls in, results back in wire format', async () => {
    fake.enqueue({
      toolCalls: [
        { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } },
        { id: 'call_b', name: 'get_weather', args: { city: 'Oslo' } },
      ],
    });
    const p = provider();
    const first = await p.chat(request({ tools: [weather], toolChoice: 'required' }));
    expect(first.toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_b', name: 'get_weather', args: { city: 'Oslo' } },
    ]);
    expect(first.stopReason).toBe('tool_calls');
    expect(fake.requests[0]!.body).toMatchObject({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: weather.inputSchema,
          },
        },
      ],
      tool_choice: 'required',
    });

    fake.enqueue('Paris is sunny, Oslo is cold.');
    const second = await p.chat(
      request({
        tools: [weather],
        toolChoice: { name: 'get_weather' },
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'call_a', name: 'get_weather', content: 'sunny' },
          { role: 'tool', toolCallId: 'call_b', name: 'get_weather', content: 'boom', isError: true },
        ],
      }),
    );
    expect(second.text).toBe('Paris is sunny, Oslo is cold.');
    const body = fake.requests[1]!.body;
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: 'boom' },
    ]);
  });

  it('merges streamed tool-call fragments by index', async () => {
    fake.enqueue({
      text: 'Checking.',
      toolCalls: [
        { name: 'get_weather', args: { city: 'Paris' } },
        { name: 'get_weather', args: { city: 'Lima' } },
      ],
    });
    const res = await provider().chat(request({ stream: true, tools: [weather] }));
    expect(res.text).toBe('Checking.');
    expect(res.toolCalls.map((c) => [c.name, c.args])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_weather', { city: 'Lima' }],
    ]);
    expect(res.toolCalls[0]!.id).toMatch(/^call_/);
  });

  it.each([false, true])(
    'reports tool arguments that are not a JSON object as argsError (stream %s)',
    async (stream) => {
      fake.enqueue({
        toolCalls: [
          { name: 'get_weather', rawArgs: '{"city": "Par' },
          { name: 'get_weather', rawArgs: '[1,2]' },
          { name: 'get_weather', rawArgs: '' },
        ],
      });
      const res = await provider().chat(request({ stream, tools: [weather] }));
      const [broken, array, empty] = res.toolCalls;
      expect(broken).toMatchObject({ args: {}, argsError: expect.stringContaining('not valid JSON') });
      expect(array).toMatchObject({ args: {}, argsError: expect.stringContaining('got an array') });
      expect(empty).toEqual({ id: expect.any(String), name: 'get_weather', args: {} });
    },
  );

  it('retries a 500 and succeeds', async () => {
    fake.enqueue({ status: 500, message: 'upstream broke' }, 'recovered');
    const res = await provider().chat(request());
    expect(res.text).toBe('recovered');
    expect(fake.requests).toHaveLength(2);
  });

  it('honours retry-after-ms on a 429', async () => {
    fake.enqueue({ status: 429, message: 'slow down', headers: { 'retry-after-ms': '150' } }, 'ok');
    const t0 = Date.now();
    expect((await provider().chat(request())).text).toBe('ok');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(fake.requests).toHaveLength(2);
  });

  it('does not retry a 400 and reports a PROVIDER error with the status', async () => {
    fake.enqueue({ status: 400, message: "model 'nope' does not exist" });
    const err = await failure(provider().chat(request()));
    expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 400 } });
    expect(err.message).toBe("OpenAI API error 400: model 'nope' does not exist");
    expect(fake.requests).toHaveLength(1);
  });

  it('gives up after maxRetries with the last status', async () => {
    fake.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
    const err = await failure(provider({ maxRetries: 1 }).chat(request()));
    expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 503 } });
    expect(fake.requests).toHaveLength(2);
  });

  it.each([false, true])(
    'cancels an in-flight call and closes the connection (stream %s)',
    async (stream) => {
      fake.enqueue({ text: 'too late', delayMs: 5000 });
      const ctrl = new AbortController();
      setTimeout(() => ctrl.abort(), 50);
      const t0 = Date.now();
      const err = await failure(provider().chat(request({ stream, signal: ctrl.signal })));
      expect(err.code).toBe('ABORTED');
      expect(Date.now() - t0).toBeLessThan(1000);
      await vi.waitFor(() => expect(fake.disconnects).toBe(1));
      expect(fake.requests).toHaveLength(1);
    },
  );

  it('cancels in the middle of a stream', async () => {
    fake.enqueue({ text: 'a b c d e f', chunkDelayMs: 300 });
    const ctrl = new AbortController();
    const deltas: string[] = [];
    const p = provider().chat(
      request({
        stream: true,
        signal: ctrl.signal,
        onDelta: (t) => {
          deltas.push(t);
          ctrl.abort();
        },
      }),
    );
    const err = await failure(p);
    expect(err.code).toBe('ABORTED');
    expect(deltas).toEqual(['a ']);
    await vi.waitFor(() => expect(fake.disconnects).toBe(1));
  });

  it('cancels during the wait before a retry (the SDK sleep ignores signals)', async () => {
    fake.enqueue({ status: 503, headers: { 'retry-after-ms': '5000' } }, 'never sent');
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    const t0 = Date.now();
    const err = await failure(provider().chat(request({ signal: ctrl.signal })));
    expect(err.code).toBe('ABORTED');
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(fake.requests).toHaveLength(1);
  });

  it('rejects at once when the signal already fired, without a request', async () => {
    const err = await failure(provider().chat(request({ signal: AbortSignal.abort() })));
    expect(err.code).toBe('ABORTED');
    expect(fake.requests).toHaveLength(0);
  });

  it('times out one attempt with TIMEOUT', async () => {
    fake.enqueue({ text: 'late', delayMs: 5000 });
    const t0 = Date.now();
    const err = await failure(provider({ maxRetries: 0 }).chat(request({ timeoutMs: 100 })));
    expect(err).toMatchObject({ code: 'TIMEOUT', message: 'OpenAI call timed out after 100 ms' });
    expect(Date.now() - t0).toBeLessThan(2000);
    // The attempt reached the server; waiting for it keeps its reply from being taken by the next test.
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
  });

  it('bounds all attempts with the timeout: a slow attempt leaves no time for a retry', async () => {
    fake.enqueue({ text: 'late', delayMs: 5000 }, 'in time');
    const err = await failure(provider({ maxRetries: 1 }).chat(request({ timeoutMs: 100 })));
    expect(err).toMatchObject({ code: 'TIMEOUT', message: 'OpenAI call timed out after 100 ms' });
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    expect(fake.pending).toBe(1);
  });

  it('times out a stream that stalls after the headers', async () => {
    fake.enqueue({ text: 'a b c', chunkDelayMs: 3000 });
    const err = await failure(provider({ maxRetries: 0 }).chat(request({ stream: true, timeoutMs: 150 })));
    expect(err).toMatchObject({ code: 'TIMEOUT' });
    expect(err.message).toContain('stalled');
  });

  it('never puts the API key in error messages, even when the server echoes it', async () => {
    const opaque = 'proj-opaque-key-0123456789';
    for (const key of [KEY, opaque]) {
      fake.enqueue((_body, req) => ({
        status: 401,
        message: `Incorrect API key: ${req.headers.authorization} (${req.headers.authorization?.slice(7)})`,
      }));
      const err = await failure(
        new OpenAIProvider(new OpenAI({ apiKey: key, baseURL: fake.baseURL, maxRetries: 0 })).chat(request()),
      );
      expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 401 } });
      const shown = `${err.message} ${String(err)} ${JSON.stringify(err.context)} ${String(err.cause ?? '')}`;
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(key.slice(8));
      expect(err.message).toContain('check the API key');
    }
  });

  it('reports an unreachable server as PROVIDER with a base-URL hint', async () => {
    const dead = new FakeOpenAI();
    await dead.start();
    const url = dead.baseURL;
    await dead.close();
    const p = new OpenAIProvider(new OpenAI({ apiKey: KEY, baseURL: url, maxRetries: 0 }));
    const err = await failure(p.chat(request()));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain(url);
    expect(err.message).toContain('base URL');
    expect(err.message).not.toContain(KEY);
  });

  it('asks for structured output with response_format json_schema', async () => {
    const schema = { type: 'object', properties: { title: { type: 'string' }, score: { type: 'integer' } } };
    const res = await provider().chat(request({ responseSchema: { name: 'Review output', schema } }));
    expect(fake.requests[0]!.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'Review_output', schema, strict: false },
    });
    expect(JSON.parse(res.text)).toEqual({ title: 'echo: Say hello', score: 0 });
  });

  it('leaves no abort listeners on a long-lived run signal', async () => {
    const ctrl = new AbortController();
    const p = provider();
    for (let i = 0; i < 15; i++) await p.chat(request({ signal: ctrl.signal, stream: i % 2 === 0 }));
    fake.enqueue({ status: 400 });
    await failure(p.chat(request({ signal: ctrl.signal })));
    expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(0);
  });

  it('answers with a deterministic echo when nothing is scripted', async () => {
    const res = await provider().chat(request());
    expect(res.text).toBe('echo: Say hello');
    expect(res.usage.inputTokens).toBeGreaterThan(0);
  });
});
