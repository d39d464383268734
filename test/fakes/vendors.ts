/** The fake OpenAI and Anthropic servers as the tests of one file (or one describe block) use them. */
import { afterAll, beforeAll } from 'vitest';
import { FakeAnthropic } from './fake-anthropic.js';
import { FakeOpenAI } from './fake-openai.js';

/**
 * Both fake vendor servers, started before the tests of the calling file or describe block and closed
 * after them (after the caller's own afterAll hooks, which may still need them).
 */
export function fakeVendors(): { openai: FakeOpenAI; anthropic: FakeAnthropic } {
  const openai = new FakeOpenAI();
  const anthropic = new FakeAnthropic();
  beforeAll(async () => {
    await Promise.all([openai.start(), anthropic.start()]);
  });
  afterAll(async () => {
    await Promise.all([openai.close(), anthropic.close()]);
  });
  return { openai, anthropic };
}
