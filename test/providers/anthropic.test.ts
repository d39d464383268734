import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { FakeAnthropic } from '../fakes/fake-anthropic.js';
import { chatRequest, failure, weather } from './helpers.js';

const KEY = 'sk-ant-test-SECRET0123456789abcdef';
const fake = new FakeAnthropic();

const provider = (maxRetries = 2, key = KEY) =>
  new AnthropicProvider(new Anthropic({ apiKey: key, baseURL: fake.baseURL, maxRetries }));

const request = (extra: Partial<ChatRequest> = {}) => chatRequest('claude-test', extra);

beforeAll(() => fake.start());
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('AnthropicProvider through the real SDK', () => {
  it('sends system at top level, max_tokens 4096 by default, and returns text and usage', async () => {
    fake.enqueue({ text: 'Hello!', usage: { input: 12, output: 3 } });
    // cache: false: the plain wire shape (the cache_control breakpoints are test/budget's subject).
    const res = await provider().chat(request({ temperature: 0.3, cache: false }));
    expect(res).toEqual({
      text: 'Hello!',
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 3 },
      stopReason: 'end_turn',
    });
    const seen = fake.requests[0]!;
    expect(seen.path).toBe('/v1/messages');
    // SDK 1.x sends the key as a bearer token (0.x used x-api-key).
    expect(seen.headers.authorization ?? seen.headers['x-api-key']).toContain(KEY);
    expect(seen.headers['anthropic-version']).toBeTruthy();
    expect(seen.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
  });

  it('passes maxTokens through', async () => {
    await provider().chat(request({ maxTokens: 99 }));
    expect(fake.requests[0]!.body.max_tokens).toBe(99);
  });

  it('streams text deltas to onDelta with usage from message_start and message_delta', async () => {
    fake.enqueue({ text: 'one two three', usage: { input: 9, output: 4 } });
    const deltas: string[] = [];
    const res = await provider().chat(request({ stream: true, onDelta: (t) => deltas.push(t) }));
    expect(res).toEqual({
      text: 'one two three',
      toolCalls: [],
      usage: { inputTokens: 9, outputTokens: 4 },
      stopReason: 'end_turn',
    });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('one two three');
    expect(fake.requests[0]!.body.stream).toBe(true);
  });

  it('round-trips tool calls, grouping consecutive results in one user message', async () => {
    fake.enqueue({
      text: 'Let me check.',
      toolCalls: [
        { id: 'toolu_a', name: 'get_weather', args: { city: 'Paris' } },
        { id: 'toolu_b', name: 'get_weather', args: { city: 'Oslo' } },
      ],
    });
    const p = provider();
    const first = await p.chat(request({ tools: [weather], toolChoice: 'required' }));
    expect(first.text).toBe('Let me check.');
    expect(first.toolCalls).toEqual([
      { id: 'toolu_a', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'toolu_b', name: 'get_weather', args: { city: 'Oslo' } },
    ]);
    expect(first.stopReason).toBe('tool_use');
    expect(fake.requests[0]!.body).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: weather.inputSchema }],
      tool_choice: { type: 'any' },
    });

    fake.enqueue('Sunny and cold.');
    await p.chat(
      request({
        tools: [weather],
        toolChoice: { name: 'get_weather' },
        cache: false,
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: 'Let me check.', toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'toolu_a', name: 'get_weather', content: 'sunny' },
          { role: 'tool', toolCallId: 'toolu_b', name: 'get_weather', content: 'boom', isError: true },
          { role: 'user', content: 'Be brief.' },
        ],
      }),
    );
    const body = fake.requests[1]!.body;
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'boom', is_error: true },
          { type: 'text', text: 'Be brief.' },
        ],
      },
    ]);
  });

  it('accumulates streamed tool_use input_json deltas', async () => {
    fake.enqueue({
      text: 'Checking.',
      toolCalls: [
        { name: 'get_weather', args: { city: 'Paris' } },
        { name: 'get_weather', args: { city: 'Lima' } },
      ],
    });
    const res = await provider().chat(request({ stream: true, tools: [weather] }));
    expect(res.text).toBe('Checking.');
    expect(res.toolCalls.map((c) => [c.id, c.name, c.args])).toEqual([
      ['toolu_0', 'get_weather', { city: 'Paris' }],
      ['toolu_1', 'get_weather', { city: 'Lima' }],
    ]);
    expect(res.stopReason).toBe('tool_use');
  });

  it.each([false, true])(
    'reports tool input that is not a JSON object as argsError (stream %s)',
    async (stream) => {
      fake.enqueue({
        toolCalls: [
          { name: 'get_weather', rawArgs: '{"city": "Par' },
          { name: 'get_weather', rawArgs: '"Paris"' },
        ],
      });
      const res = await provider().chat(request({ stream, tools: [weather] }));
      for (const call of res.toolCalls) {
        expect(call.args).toEqual({});
        expect(call.argsError).toBeTruthy();
      }
      expect(res.toolCalls[1]!.argsError).toMatch(/got a string|not valid JSON/);
    },
  );

  it('retries a 500 and a 529 and succeeds', async () => {
    fake.enqueue({ status: 500 }, { status: 529, message: 'Overloaded' }, 'recovered');
    expect((await provider().chat(request())).text).toBe('recovered');
    expect(fake.requests).toHaveLength(3);
  });

  it('honours retry-after-ms on a 429', async () => {
    fake.enqueue({ status: 429, headers: { 'retry-after-ms': '150' } }, 'ok');
    const t0 = Date.now();
    expect((await provider().chat(request())).text).toBe('ok');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(fake.requests).toHaveLength(2);
  });

  it('does not retry a 400 and reports PROVIDER with the status and the API message', async () => {
    fake.enqueue({ status: 400, message: 'messages: roles must alternate' });
    const err = await failure(provider().chat(request()));
    expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 400 } });
    expect(err.message).toBe('Anthropic API error 400: messages: roles must alternate');
    expect(fake.requests).toHaveLength(1);
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
    },
  );

  it('cancels during the wait before a retry', async () => {
    fake.enqueue({ status: 529, headers: { 'retry-after-ms': '5000' } }, 'never sent');
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    const t0 = Date.now();
    const err = await failure(provider().chat(request({ signal: ctrl.signal })));
    expect(err.code).toBe('ABORTED');
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(fake.requests).toHaveLength(1);
  });

  it('times out one attempt with TIMEOUT', async () => {
    fake.enqueue({ text: 'late', delayMs: 5000 });
    const err = await failure(provider(0).chat(request({ timeoutMs: 100 })));
    expect(err).toMatchObject({ code: 'TIMEOUT', message: 'Anthropic call timed out after 100 ms' });
    // The attempt reached the server; waiting for it keeps its reply from being taken by the next test.
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
  });

  it('times out a stream that stalls after the headers', async () => {
    fake.enqueue({ text: 'a b c', chunkDelayMs: 3000 });
    const err = await failure(provider(0).chat(request({ stream: true, timeoutMs: 150 })));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain('stalled');
  });

  it('never puts the API key in error messages, even when the server echoes it', async () => {
    const opaque = 'opaque-anthropic-key-0123456789';
    for (const key of [KEY, opaque]) {
      fake.enqueue((_body, req) => ({
        status: 401,
        message: `invalid x-api-key: ${req.headers.authorization} / ${req.headers.authorization?.slice(7)}`,
      }));
      const err = await failure(provider(0, key).chat(request()));
      expect(err).toMatchObject({ code: 'PROVIDER', context: { status: 401 } });
      const shown = `${err.message} ${String(err)} ${JSON.stringify(err.context)} ${String(err.cause ?? '')}`;
      expect(shown).not.toContain(key);
      expect(shown).toContain('invalid x-api-key');
    }
  });

  it('reports an unreachable server as PROVIDER with a base-URL hint', async () => {
    const dead = new FakeAnthropic();
    await dead.start();
    const url = dead.baseURL;
    await dead.close();
    const p = new AnthropicProvider(new Anthropic({ apiKey: KEY, baseURL: url, maxRetries: 0 }));
    const err = await failure(p.chat(request()));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain(url);
    expect(err.message).toContain('ANTHROPIC_BASE_URL');
  });

  describe('structured output (a forced tool named after the schema)', () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, score: { type: 'integer' } },
      required: ['title'],
    };

    it.each([false, true])(
      'forces the schema tool and returns its input as text (stream %s)',
      async (stream) => {
        fake.enqueue({ toolCalls: [{ name: 'Review_output', args: { title: 'Dune', score: 9 } }] });
        const deltas: string[] = [];
        const res = await provider().chat(
          request({
            stream,
            cache: false,
            responseSchema: { name: 'Review output', schema },
            onDelta: (t) => deltas.push(t),
          }),
        );
        expect(JSON.parse(res.text)).toEqual({ title: 'Dune', score: 9 });
        expect(res.toolCalls).toEqual([]);
        const body = fake.requests[0]!.body;
        expect(body.tools).toEqual([
          { name: 'Review_output', description: expect.any(String), input_schema: schema },
        ]);
        expect(body.tool_choice).toEqual({ type: 'tool', name: 'Review_output' });
        if (stream) expect(JSON.parse(deltas.join(''))).toEqual({ title: 'Dune', score: 9 });
      },
    );

    it('wraps a non-object schema under `value` and unwraps the answer', async () => {
      const list = { type: 'array', items: { type: 'string' } };
      fake.enqueue({ toolCalls: [{ name: 'list', args: { value: ['a', 'b'] } }] });
      const res = await provider().chat(request({ responseSchema: { name: 'list', schema: list } }));
      expect(res.text).toBe('["a","b"]');
      expect(fake.requests[0]!.body.tools[0].input_schema).toEqual({
        type: 'object',
        properties: { value: list },
        required: ['value'],
      });
    });

    it('keeps the other tools usable: the schema tool is offered, not forced', async () => {
      await provider().chat(request({ tools: [weather], responseSchema: { name: 'out', schema } }));
      const body = fake.requests[0]!.body;
      expect(body.tools.map((t: { name: string }) => t.name)).toEqual(['get_weather', 'out']);
      expect(body.tool_choice).toBeUndefined();
    });

    it('works against the default fake reply (schema-shaped echo)', async () => {
      const res = await provider().chat(request({ responseSchema: { name: 'out', schema } }));
      expect(JSON.parse(res.text)).toEqual({ title: 'echo: Say hello', score: 0 });
    });
  });
});
