import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import { ANTHROPIC } from '../../src/providers/anthropic-vendor.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { OPENAI } from '../../src/providers/openai-vendor.js';
import type { ChatRequest, Provider } from '../../src/providers/types.js';
import type { VendorInfo } from '../../src/providers/vendors.js';
import { FakeAnthropic } from '../fakes/fake-anthropic.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/http.js';

/** A minimal chat request for `model`, with a never-aborted signal; `extra` overrides any field. */
export function chatRequest(model: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model,
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'Say hello' }],
    signal: new AbortController().signal,
    ...extra,
  };
}

/** The error a promise rejects with; fails the test when it resolves instead. */
export const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as HatcheryError,
  );

/** A tool spec used by the tool-call tests of both vendors. */
export const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** Starts the fake vendor servers before the file's tests and closes them after. */
export function serveFakes(...fakes: { start(): Promise<unknown>; close(): Promise<unknown> }[]): void {
  beforeAll(async () => {
    for (const f of fakes) await f.start();
  });
  afterAll(async () => {
    for (const f of fakes) await f.close();
  });
}

/** What a provider test may set on the SDK client it is built with. */
export interface ClientOptions {
  maxRetries?: number;
  apiKey?: string;
  baseURL?: string;
  fetch?: typeof fetch;
}

/** One vendor of VENDORS as the provider suites test it: its provider on the real SDK against its fake. */
export interface VendorCase {
  vendor: VendorInfo;
  fake: FakeServer & { readonly baseURL: string };
  /** The model id sent (no prefix). */
  model: string;
  /** The key the provider sends unless the test gives another. */
  key: string;
  /** The endpoint path of a chat call. */
  path: string;
  /** The stop reason of a reply that calls tools. */
  toolStop: string;
  /** The provider on a fresh SDK client pointed at the fake (SDK default of 2 retries). */
  make(options?: ClientOptions): Provider;
}

/** Both SDK vendors against their fake servers, started before the file's tests. */
export function vendorCases(): VendorCase[] {
  const openai = new FakeOpenAI();
  const anthropic = new FakeAnthropic();
  serveFakes(openai, anthropic);
  const key = 'sk-test-SECRET0123456789abcdef';
  return [
    {
      vendor: OPENAI,
      fake: openai,
      model: 'gpt-test',
      key,
      path: '/v1/chat/completions',
      toolStop: 'tool_calls',
      make: (o = {}) =>
        new OpenAIProvider(new OpenAI({ apiKey: key, baseURL: openai.baseURL, maxRetries: 2, ...o })),
    },
    {
      vendor: ANTHROPIC,
      fake: anthropic,
      model: 'claude-test',
      key,
      path: '/v1/messages',
      toolStop: 'tool_use',
      make: (o = {}) =>
        new AnthropicProvider(
          new Anthropic({ apiKey: key, baseURL: anthropic.baseURL, maxRetries: 2, ...o }),
        ),
    },
  ];
}
