import { afterAll, beforeAll } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { ChatRequest } from '../../src/providers/types.js';

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
