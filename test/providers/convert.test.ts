import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import {
  AnthropicStreamAccumulator,
  fromAnthropicUsage,
  toAnthropicMessages,
  toAnthropicParams,
} from '../../src/providers/anthropic-convert.js';
import { displayURL, redactSecrets } from '../../src/providers/errors.js';
import {
  OpenAIStreamAccumulator,
  parseToolArgs,
  toOpenAIMessages,
  toOpenAIParams,
} from '../../src/providers/openai-convert.js';
import type { ChatRequest } from '../../src/providers/types.js';

const base: ChatRequest = { model: 'm', system: '', messages: [], signal: new AbortController().signal };

describe('OpenAI conversion', () => {
  it('omits an empty system prompt and tool_choice without tools', () => {
    const p = toOpenAIParams({ ...base, messages: [{ role: 'user', content: 'x' }], toolChoice: 'required' });
    expect(p).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  });

  it('keeps assistant text next to tool calls and sends {} for missing args', () => {
    const msgs = toOpenAIMessages('', [
      { role: 'assistant', content: 'thinking', toolCalls: [{ id: 'c', name: 't', args: {} }] },
    ]);
    expect(msgs[0]).toMatchObject({ content: 'thinking', tool_calls: [{ function: { arguments: '{}' } }] });
  });

  it('parses tool arguments strictly into objects', () => {
    expect(parseToolArgs('i', 'n', ' {"a":1} ')).toEqual({ id: 'i', name: 'n', args: { a: 1 } });
    expect(parseToolArgs('i', 'n', 'null').argsError).toContain('got null');
    expect(parseToolArgs('i', 'n', '42').argsError).toContain('got a number');
    expect(parseToolArgs('i', 'n', '{').argsError).toContain('not valid JSON');
  });

  it('accumulates chunks, ignoring repeated names and other choices', () => {
    const acc = new OpenAIStreamAccumulator();
    const chunk = (choices: unknown[], usage?: unknown) =>
      ({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices,
        usage,
      }) as ChatCompletionChunk;
    acc.push(chunk([{ index: 0, delta: { content: 'Hi' }, finish_reason: null }]));
    acc.push(chunk([{ index: 1, delta: { content: 'other choice' }, finish_reason: null }]));
    acc.push(
      chunk([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a"' } }] },
          finish_reason: null,
        },
      ]),
    );
    acc.push(
      chunk([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: ':1}' } }] },
          finish_reason: null,
        },
      ]),
    );
    expect(acc.finished).toBe(false);
    acc.push(chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]));
    acc.push(chunk([], { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }));
    expect(acc.finish()).toEqual({
      text: 'Hi',
      toolCalls: [{ id: 'c1', name: 'f', args: { a: 1 } }],
      usage: { inputTokens: 3, outputTokens: 2 },
      stopReason: 'tool_calls',
    });
  });
});

describe('Anthropic conversion', () => {
  it('skips empty assistant turns and sanitises tool ids', () => {
    const msgs = toAnthropicMessages([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call:1/x', name: 't', args: {} }] },
      { role: 'tool', toolCallId: 'call:1/x', name: 't', content: '' },
    ]);
    expect(msgs).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1_x', name: 't', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1_x' }] },
    ]);
  });

  it('maps tool choice and omits temperature (the API version has no sampling parameters)', () => {
    const tool = { name: 't', description: 'd', inputSchema: { type: 'object' } };
    const { params } = toAnthropicParams({ ...base, tools: [tool], toolChoice: 'auto', temperature: 1 });
    expect(params.tool_choice).toEqual({ type: 'auto' });
    expect('temperature' in params).toBe(false);
  });

  it('counts cache reads and writes as input tokens, cache reads also as cached input', () => {
    expect(
      fromAnthropicUsage({
        input_tokens: 5,
        output_tokens: 7,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1000,
      }),
    ).toEqual({ inputTokens: 1105, outputTokens: 7, cachedInputTokens: 1000 });
  });

  it('merges message_delta usage over message_start', () => {
    const acc = new AnthropicStreamAccumulator();
    const events = [
      {
        type: 'message_start',
        message: { content: [], usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5 } },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hel' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { output_tokens: 8, input_tokens: null, cache_read_input_tokens: null },
      },
      { type: 'message_stop' },
    ] as unknown as RawMessageStreamEvent[];
    const fragments = events.map((e) => acc.push(e)).filter(Boolean);
    expect(fragments).toEqual(['Hel', 'lo']);
    expect(acc.finished).toBe(true);
    expect(acc.finish()).toEqual({
      text: 'Hello',
      toolCalls: [],
      usage: { inputTokens: 15, outputTokens: 8, cachedInputTokens: 5 },
      stopReason: 'end_turn',
    });
  });
});

describe('secret handling', () => {
  it('redacts known keys, sk- keys and auth header values', () => {
    const text = 'key my-org-key-123456789 sk-proj-abcdef123456 Authorization: Bearer abc.def-ghi';
    const out = redactSecrets(text, 'my-org-key-123456789');
    expect(out).toBe('key *** sk-*** Authorization: Bearer ***');
  });

  it('strips credentials and queries from URLs shown in hints', () => {
    expect(displayURL('https://user:pw@example.com/v1/?key=1')).toBe('https://example.com/v1');
  });
});
