import { getEventListeners } from 'node:events';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { chatRequest } from './helpers.js';

/**
 * Provider calls watch the run's (or a fan-out's) signal through one shared listener (watchAbort in
 * core/cancel.ts) instead of one each: many calls in flight on one signal must still all end when
 * it aborts, and nothing may stay attached to it afterwards.
 */
const fake = new FakeOpenAI({ latencyMs: 5_000 });
beforeAll(() => fake.start());
afterAll(() => fake.close());

describe('provider calls on one shared signal', () => {
  it('50 calls in flight hold one listener; aborting ends every call and leaves none', async () => {
    const ctrl = new AbortController();
    const p = new OpenAIProvider(new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 }));
    const calls = Array.from({ length: 50 }, () =>
      p.chat(chatRequest('gpt-4o-mini', { signal: ctrl.signal })).catch((e: HatcheryError) => e),
    );
    await vi.waitFor(() => expect(fake.requests).toHaveLength(50), { timeout: 10_000 });
    expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(1);
    ctrl.abort();
    const errors = await Promise.all(calls);
    for (const err of errors) expect(err).toMatchObject({ code: 'ABORTED' });
    // Each call ended before the fake answered (it waits 5 s): the fake saw every client hang up.
    await vi.waitFor(() => expect(fake.disconnects).toBe(50), { timeout: 10_000 });
    expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(0);
  });

  it('a call ended before the signal aborts is not touched by the abort', async () => {
    const quick = new FakeOpenAI();
    await quick.start();
    try {
      const ctrl = new AbortController();
      const p = new OpenAIProvider(new OpenAI({ apiKey: 'sk-test', baseURL: quick.baseURL, maxRetries: 0 }));
      const res = await p.chat(chatRequest('gpt-4o-mini', { signal: ctrl.signal }));
      expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(0);
      ctrl.abort();
      expect(res.text).toContain('echo');
    } finally {
      await quick.close();
    }
  });
});
