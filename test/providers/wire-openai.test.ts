import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { chatRequest, weather } from './helpers.js';

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

describe('OpenAIProvider: the Chat Completions wire format', () => {
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

  it('asks a stream to end with usage', async () => {
    await provider().chat(request({ stream: true }));
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

  it('asks for structured output with response_format json_schema', async () => {
    const schema = { type: 'object', properties: { title: { type: 'string' }, score: { type: 'integer' } } };
    const res = await provider().chat(request({ responseSchema: { name: 'Review output', schema } }));
    expect(fake.requests[0]!.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'Review_output', schema, strict: false },
    });
    expect(JSON.parse(res.text)).toEqual({ title: 'echo: Say hello', score: 0 });
  });
});
