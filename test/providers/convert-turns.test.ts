import { describe, expect, it } from 'vitest';
import { toAnthropicParams } from '../../src/providers/anthropic-convert.js';
import { toOpenAIParams } from '../../src/providers/openai-convert.js';
import type { ChatMessage, ChatRequest } from '../../src/providers/types.js';

// A tool loop sends the same (growing) message list on every turn, and each message is converted
// once: every turn's request must still be exactly what a fresh conversion of the same conversation
// gives (fresh copies of the messages are never seen before, so they are converted from scratch).

const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
};

function request(messages: ChatMessage[]): ChatRequest {
  return {
    model: 'm',
    system: 'You are terse.',
    messages,
    tools: [weather],
    signal: new AbortController().signal,
  };
}

/** Turn after turn of a loop: an assistant turn (text or not, one or two calls), then its results. */
function* turns(): Generator<ChatMessage[]> {
  for (let t = 0; t < 6; t++) {
    const calls = Array.from({ length: (t % 2) + 1 }, (_, i) => ({
      id: `call.${t}.${i}`,
      name: 'get_weather',
      args: { city: `C${t}${i}`, nested: { n: [t, i] } },
    }));
    const assistant: ChatMessage = {
      role: 'assistant',
      content: t % 3 === 0 ? '' : `turn ${t}`,
      toolCalls: calls,
    };
    const results: ChatMessage[] = calls.map((c, i) => ({
      role: 'tool',
      toolCallId: c.id,
      name: c.name,
      content: i === 1 ? '' : `sunny in ${c.args.city}`,
      isError: t === 4,
    }));
    // Now and then a user turn right after the results (it joins them on Anthropic).
    yield t === 2
      ? [assistant, ...results, { role: 'user', content: 'and tomorrow?' }]
      : [assistant, ...results];
  }
}

describe.each([
  ['OpenAI', (r: ChatRequest) => toOpenAIParams(r, { maxTokensField: 'max_tokens' })],
  ['Anthropic', (r: ChatRequest) => toAnthropicParams(r).params],
  [
    'Anthropic without cache breakpoints',
    (r: ChatRequest) => toAnthropicParams({ ...r, cache: false }).params,
  ],
])('%s: converting a growing conversation on every turn', (_name, convert) => {
  it('sends exactly what converting it from scratch sends, turn after turn', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Weather in Paris and Rome?' }];
    for (const added of turns()) {
      messages.push(...added);
      const reused = JSON.stringify(convert(request(messages)));
      const fresh = JSON.stringify(convert(request(structuredClone(messages))));
      expect(reused).toBe(fresh);
      // And converting the same list twice in a row changes nothing either.
      expect(JSON.stringify(convert(request(messages)))).toBe(fresh);
    }
  });

  it('does not carry a cache breakpoint of one turn into the next', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'calling', toolCalls: [{ id: 'a', name: 'get_weather', args: {} }] },
    ];
    // The assistant turn is the last message here, so it carries the breakpoint in this request...
    convert(request(messages));
    messages.push({ role: 'tool', toolCallId: 'a', name: 'get_weather', content: 'ok' });
    const next = JSON.stringify(convert(request(messages)));
    // ...and only the last message carries it in the next one.
    expect(next).toBe(JSON.stringify(convert(request(structuredClone(messages)))));
    expect(next.match(/cache_control/g)?.length ?? 0).toBeLessThanOrEqual(3);
  });
});
