/**
 * Nodes that name the same provider and model share one resolved model (providers/resolve.ts)
 * instead of one object each. These check that sharing changes nothing a run sends: each node's
 * calls carry its own model id, vendor, sampling settings and provider, whatever the other nodes
 * set; the MCP client's model is each run's own; and the shared object cannot be changed.
 */
import { describe, expect, it } from 'vitest';
import { ProviderRegistry } from '../../src/providers/resolve.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load } from '../helpers.js';

const where = { node: 'N' };

describe('resolved models', () => {
  it('are one object per provider, vendor and model, and frozen', () => {
    const openai = new ScriptedProvider(() => 'o');
    const created: string[] = [];
    const registry = new ProviderRegistry({
      env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
      // One provider for both vendors: the vendor still tells them apart.
      overrides: { openai, sampling: openai },
      factory: (vendor, opts) => {
        created.push(`${vendor} ${opts.baseURL ?? ''}`);
        return new ScriptedProvider(() => vendor);
      },
    });
    const a = registry.resolve('openai:m1', undefined, undefined, where);
    expect(registry.resolve('openai:m1', undefined, undefined, { node: 'Other' })).toBe(a);
    expect(registry.resolve('openai:m2', undefined, undefined, where)).toMatchObject({
      provider: openai,
      model: 'm2',
    });
    expect(registry.resolve('sampling:m1', undefined, undefined, where)).toMatchObject({
      provider: openai,
      vendor: 'sampling',
    });
    expect(Object.isFrozen(a)).toBe(true);
    expect(() => {
      (a as { model: string }).model = 'changed';
    }).toThrow(TypeError);
    expect(registry.resolve('openai:m1', undefined, undefined, where).model).toBe('m1');
    // Providers of the factory: one per base URL, each with its own resolved model.
    const c1 = registry.resolve('anthropic:c', undefined, undefined, where);
    const c2 = registry.resolve('anthropic:c', { url: 'http://127.0.0.1:9/' }, undefined, where);
    expect(registry.resolve('anthropic:c', undefined, undefined, where)).toBe(c1);
    expect(c2).not.toBe(c1);
    expect(c2.provider).not.toBe(c1.provider);
    expect(created).toEqual(['anthropic ', 'anthropic http://127.0.0.1:9/']);
  });

  it("send each node's own model and settings, whatever other nodes of that model set", async () => {
    const model = new ScriptedProvider((req) => `${req.model} ${req.temperature ?? '-'}`);
    const runtime = new Runtime({ providers: { openai: model, anthropic: model }, env: {} });
    const h = load(
      hatch([
        { name: 'A', model: 'openai:m', temperature: 0.1, usr_prompt: 'a', next: 'B' },
        { name: 'B', model: 'openai:m', temperature: 0.9, max_tokens: 5, usr_prompt: 'b', next: 'C' },
        { name: 'C', model: 'openai:m', usr_prompt: 'c', cache: false, next: 'D' },
        { name: 'D', model: 'anthropic:m', usr_prompt: 'd', next: 'E' },
        { name: 'E', model: 'openai:other', temperature: 0.1, usr_prompt: 'e' },
      ]),
    );
    for (let run = 0; run < 2; run++) {
      model.calls.length = 0;
      const r = await runtime.run(h, { input: 'x' });
      expect(r.outputs).toEqual({ A: 'm 0.1', B: 'm 0.9', C: 'm -', D: 'm -', E: 'other 0.1' });
      expect(model.calls.map((c) => [c.model, c.temperature, c.maxTokens, c.cache])).toEqual([
        ['m', 0.1, undefined, undefined],
        ['m', 0.9, 5, undefined],
        ['m', undefined, undefined, false],
        ['m', undefined, undefined, undefined],
        ['other', 0.1, undefined, undefined],
      ]);
    }
    await runtime.close();
  });

  it("of the MCP client's model are each run's own client", async () => {
    const runtime = new Runtime({ providers: {}, env: {} });
    const h = load(
      hatch([
        { name: 'A', model: 'sampling', usr_prompt: 'a', next: 'B' },
        { name: 'B', model: 'sampling', usr_prompt: 'b' },
      ]),
    );
    const client = (name: string): Provider => new ScriptedProvider(() => name);
    const first = await runtime.run(h, { input: 'x', sampling: client('first') });
    const second = await runtime.run(h, { input: 'x', sampling: client('second') });
    expect(first.outputs).toEqual({ A: 'first', B: 'first' });
    expect(second.outputs).toEqual({ A: 'second', B: 'second' });
    await runtime.close();
  });
});
