/**
 * The default provider factory imports the vendor SDK on the first call, then hands every call
 * straight to it: calls made while the import is still under way, and every call after it, get
 * their own answers from the real SDK (fake servers on loopback).
 */
import { describe, expect, it } from 'vitest';
import { sdkFactory } from '../../src/providers/factory.js';
import { FakeAnthropic } from '../fakes/fake-anthropic.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { chatRequest, serveFakes } from './helpers.js';

const openaiFake = new FakeOpenAI();
const anthropicFake = new FakeAnthropic();

serveFakes(openaiFake, anthropicFake);

const vendors: ['openai' | 'anthropic', FakeOpenAI | FakeAnthropic, string][] = [
  ['openai', openaiFake, 'gpt-test'],
  ['anthropic', anthropicFake, 'claude-test'],
];

describe.each(vendors)('sdkFactory(%s)', (vendor, fake, model) => {
  it('answers the calls made while the SDK loads and those after it, each its own', async () => {
    const provider = sdkFactory(vendor, { apiKey: 'sk-test-factory-key', baseURL: fake.baseURL });
    expect(provider.id).toBe(vendor);
    const ask = (q: string) =>
      provider.chat(chatRequest(model, { messages: [{ role: 'user', content: q }] }));
    // Made before the SDK is imported: they wait for the one import.
    const early = await Promise.all(['a', 'b', 'c'].map(ask));
    expect(early.map((r) => r.text)).toEqual(['echo: a', 'echo: b', 'echo: c']);
    // Made after: straight to the loaded provider.
    expect((await ask('d')).text).toBe('echo: d');
    const err = await provider.chat(chatRequest(model, { signal: AbortSignal.abort() })).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    );
    expect(err?.code).toBe('ABORTED');
  });
});
