import { getEventListeners } from 'node:events';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { nodeFetch } from '../../src/providers/node-fetch.js';
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
    const p = new OpenAIProvider(
      new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0, fetch: nodeFetch }),
    );
    const calls = Array.from({ length: 50 }, () =>
      p.chat(chatRequest('gpt-4o-mini', { signal: ctrl.signal })).catch((e: HatcheryError) => e),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(1);
    const t0 = performance.now();
    ctrl.abort();
    const errors = await Promise.all(calls);
    expect(performance.now() - t0).toBeLessThan(2_000);
    for (const err of errors) expect(err).toMatchObject({ code: 'ABORTED' });
    expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(0);
  });

  it('a call ended before the signal aborts is not touched by the abort', async () => {
    const quick = new FakeOpenAI();
    await quick.start();
    try {
      const ctrl = new AbortController();
      const p = new OpenAIProvider(
        new OpenAI({ apiKey: 'sk-test', baseURL: quick.baseURL, maxRetries: 0, fetch: nodeFetch }),
      );
      const res = await p.chat(chatRequest('gpt-4o-mini', { signal: ctrl.signal }));
      expect(getEventListeners(ctrl.signal, 'abort')).toHaveLength(0);
      ctrl.abort();
      expect(res.text).toContain('echo');
    } finally {
      await quick.close();
    }
  });
});
