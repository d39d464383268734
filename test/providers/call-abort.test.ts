import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import type { Provider } from '../../src/providers/types.js';
import { FakeAnthropic } from '../fakes/fake-anthropic.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/http.js';
import { chatRequest, failure, serveFakes } from './helpers.js';

// The signal each HTTP request of the SDK went out with, as fetch saw it: aborted means the request
// (or what was left of it) was torn down.
const signals: AbortSignal[] = [];
const watching: typeof fetch = (input, init) => {
  if (init?.signal) signals.push(init.signal);
  return fetch(input, init);
};

const openaiFake = new FakeOpenAI();
const anthropicFake = new FakeAnthropic();

const vendors: [string, FakeServer, () => Provider, string][] = [
  [
    'OpenAI',
    openaiFake,
    () =>
      new OpenAIProvider(
        new OpenAI({ apiKey: 'sk-test-key', baseURL: openaiFake.baseURL, maxRetries: 0, fetch: watching }),
      ),
    'gpt-test',
  ],
  [
    'Anthropic',
    anthropicFake,
    () =>
      new AnthropicProvider(
        new Anthropic({
          apiKey: 'sk-ant-test-key',
          baseURL: anthropicFake.baseURL,
          maxRetries: 0,
          fetch: watching,
        }),
      ),
    'claude-test',
  ],
];

serveFakes(openaiFake, anthropicFake);
beforeEach(() => {
  signals.length = 0;
  openaiFake.reset();
  anthropicFake.reset();
});

describe.each(vendors)('%s calls and their HTTP requests', (_vendor, fake, provider, model) => {
  it.each([false, true])('a call that got its reply leaves its request alone (stream %s)', async (stream) => {
    const res = await provider().chat(chatRequest(model, { stream }));
    expect(res.text).toBe('echo: Say hello');
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
    expect(fake.disconnects).toBe(0);
  });

  it.each([false, true])('a cancelled call aborts its HTTP request (stream %s)', async (stream) => {
    fake.enqueue({ text: 'too late', delayMs: 5000 });
    const ctrl = new AbortController();
    const call = failure(provider().chat(chatRequest(model, { stream, signal: ctrl.signal })));
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1), { timeout: 10_000 });
    ctrl.abort();
    const err = await call;
    expect(err.code).toBe('ABORTED');
    expect(signals[0]!.aborted).toBe(true);
    await vi.waitFor(() => expect(fake.disconnects).toBe(1));
  });

  it('calls at once on one provider each get the reply to their own request', async () => {
    // The provider builds its SDK call once: nothing of one request may reach another one's.
    const p = provider();
    const asks = Array.from({ length: 20 }, (_, i) => `question ${i}`);
    const replies = await Promise.all(
      asks.map((q, i) =>
        p.chat(chatRequest(model, { messages: [{ role: 'user', content: q }], stream: i % 2 === 1 })),
      ),
    );
    expect(replies.map((r) => r.text)).toEqual(asks.map((q) => `echo: ${q}`));
  });

  it('a request that cannot be converted rejects the call: nothing thrown, nothing sent', async () => {
    let call: Promise<unknown> | undefined;
    expect(() => {
      call = provider().chat(chatRequest(model, { messages: undefined as never }));
    }).not.toThrow();
    await expect(call).rejects.toThrow();
    expect(signals).toHaveLength(0);
  });

  it('a call past its timeout aborts its HTTP request', async () => {
    fake.enqueue({ text: 'too late', delayMs: 5000 });
    const err = await failure(provider().chat(chatRequest(model, { timeoutMs: 100 })));
    expect(err.code).toBe('TIMEOUT');
    expect(signals[0]!.aborted).toBe(true);
    await vi.waitFor(() => expect(fake.disconnects).toBe(1));
  });

  it('a stream that stalls is aborted', async () => {
    fake.enqueue({ text: 'a b c', chunkDelayMs: 2000 });
    const err = await failure(provider().chat(chatRequest(model, { stream: true, timeoutMs: 150 })));
    expect(err.code).toBe('TIMEOUT');
    expect(signals[0]!.aborted).toBe(true);
    await vi.waitFor(() => expect(fake.disconnects).toBe(1));
  });
});
