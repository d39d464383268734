/**
 * What AnthropicProvider sends and reads in Anthropic's own wire format; what every vendor's provider
 * does (retries, cancellation, timeouts, errors) is in sdk-providers.test.ts.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { FakeAnthropic } from '../fakes/fake-anthropic.js';
import { chatRequest, weather } from './helpers.js';

const KEY = 'sk-ant-test-SECRET0123456789abcdef';
const fake = new FakeAnthropic();

const provider = (maxRetries = 2, key = KEY) =>
  new AnthropicProvider(new Anthropic({ apiKey: key, baseURL: fake.baseURL, maxRetries }));

const request = (extra: Partial<ChatRequest> = {}) => chatRequest('claude-test', extra);

beforeAll(() => fake.start());
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('AnthropicProvider: the Messages wire format', () => {
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
  });
});
