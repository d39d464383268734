/**
 * Prompt caching: Anthropic requests carry cache_control breakpoints by default (system prompt, last
 * tool, last message) and a tool loop reads its growing conversation back from the cache; `cache:
 * false` sends none; OpenAI's automatic caching is reported too. Cached tokens are priced at the
 * cached price.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import type { Usage } from '../../src/providers/types.js';
import { fakeVendors } from '../fakes/vendors.js';
import { hatch, load } from '../helpers.js';
import { runtimeFor } from './helpers.js';

const fakes = fakeVendors();
afterEach(() => {
  fakes.openai.reset();
  fakes.anthropic.reset();
});

/** Long enough (about 1,500 tokens) to pass the vendors' minimum cacheable prefix. */
const LONG_SYSTEM = `You are a careful assistant. ${'Follow the house style guide to the letter. '.repeat(140)}`;

const modelCalls = (events: RunEvent[]) =>
  events.filter((e): e is Extract<RunEvent, { type: 'model_call' }> => e.type === 'model_call');

/** A drone in a tool loop: it calls echo `turns - 1` times, then answers. */
function toolLoop(fake: typeof fakes.anthropic | typeof fakes.openai, turns: number): void {
  for (let i = 1; i < turns; i++)
    fake.enqueue({ toolCalls: [{ id: `t${i}`, name: 'echo', args: { text: `step ${i}` } }] });
  fake.enqueue('final answer');
}

const agent = (model: string, extra: Record<string, unknown> = {}) =>
  hatch([
    {
      name: 'Agent',
      model,
      sys_prompt: LONG_SYSTEM,
      usr_prompt: 'work on {{ ctx.input }}',
      tools: ['echo'],
      ...extra,
    },
  ]);

/** What a call costs at `input`/`cached`/`output` dollars per million tokens. */
const cost = (u: Usage, input: number, cached: number, output: number) =>
  ((u.inputTokens - (u.cachedInputTokens ?? 0)) * input +
    (u.cachedInputTokens ?? 0) * cached +
    u.outputTokens * output) /
  1_000_000;

describe('Anthropic prompt caching', () => {
  it('sends the breakpoints, and a 10-turn tool loop reports cached input tokens priced at the cached price', async () => {
    toolLoop(fakes.anthropic, 10);
    const events: RunEvent[] = [];
    const res = await runtimeFor(fakes).run(load(agent('anthropic:claude-sonnet-5-5')), {
      input: 'x',
      onEvent: (e) => events.push(e),
    });
    expect(res.output).toBe('final answer');
    expect(fakes.anthropic.requests).toHaveLength(10);

    // The markers: the last tool, the system prompt, and the conversation's last block (never over 4).
    const markers = fakes.anthropic.cacheMarkers;
    expect(markers[0]).toEqual(['tools/0', 'system/0', 'messages/0/content/0']);
    markers.forEach((m, turn) => {
      expect(m.length).toBeLessThanOrEqual(4);
      const last = fakes.anthropic.requests[turn]!.body.messages.length - 1;
      expect(m.at(-1)).toMatch(new RegExp(`^messages/${last}/content/\\d+$`));
    });
    const first = fakes.anthropic.requests[0]!.body;
    expect(first.system).toEqual([{ type: 'text', text: LONG_SYSTEM, cache_control: { type: 'ephemeral' } }]);
    expect(first.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });

    // Turn 1 writes the cache; every later turn reads more of the growing conversation back.
    const calls = modelCalls(events);
    expect(calls).toHaveLength(10);
    expect(calls[0]!.usage?.cachedInputTokens).toBeUndefined();
    const cached = calls.slice(1).map((c) => c.usage?.cachedInputTokens ?? 0);
    for (let i = 1; i < cached.length; i++) expect(cached[i]).toBeGreaterThan(cached[i - 1]!);
    expect(cached[0]).toBeGreaterThan(1000);
    const total = cached.reduce((a, b) => a + b, 0);
    expect(res.usage.cachedInputTokens).toBe(total);

    // Sonnet 5.5: $2 input, $0.20 cached input, $10 output per million tokens.
    for (const c of calls) expect(c.usage?.costUsd).toBeCloseTo(cost(c.usage!, 2, 0.2, 10), 15);
    const sum = calls.reduce((a, c) => a + (c.usage?.costUsd ?? 0), 0);
    expect(res.usage.costUsd).toBeCloseTo(sum, 15);
    expect(res.usage.costUsd).toBeLessThan(cost({ ...res.usage, cachedInputTokens: 0 }, 2, 0.2, 10));
  });

  it('cache: false on the drone sends no breakpoint and reads nothing from the cache', async () => {
    toolLoop(fakes.anthropic, 4);
    const res = await runtimeFor(fakes).run(load(agent('anthropic:claude-sonnet-5-5', { cache: false })), {
      input: 'x',
    });
    expect(fakes.anthropic.cacheMarkers).toEqual([[], [], [], []]);
    expect(typeof fakes.anthropic.requests[0]!.body.system).toBe('string');
    expect(JSON.stringify(fakes.anthropic.requests.map((r) => r.body))).not.toContain('cache_control');
    expect(res.usage.cachedInputTokens).toBeUndefined();
  });

  it("the hatchery's cache: false is every drone's default; a drone's own cache: true wins", async () => {
    const def = (droneCache?: boolean) => {
      const h = agent('anthropic:claude-sonnet-5-5', droneCache === undefined ? {} : { cache: droneCache });
      return load({ ...h, cache: false });
    };
    toolLoop(fakes.anthropic, 1);
    await runtimeFor(fakes).run(def(), { input: 'x' });
    expect(fakes.anthropic.cacheMarkers).toEqual([[]]);
    fakes.anthropic.reset();
    toolLoop(fakes.anthropic, 1);
    await runtimeFor(fakes).run(def(true), { input: 'x' });
    expect(fakes.anthropic.cacheMarkers[0]).toEqual(['tools/0', 'system/0', 'messages/0/content/0']);
  });
});

describe('OpenAI cached tokens', () => {
  it('a repeated prompt prefix is reported as cached input and priced at the cached price', async () => {
    const h = load(agent('openai:gpt-5.4-mini', { tools: undefined }));
    const runtime = runtimeFor(fakes);
    const first = await runtime.run(h, { input: 'one' });
    expect(first.usage.cachedInputTokens).toBeUndefined();
    const second = await runtime.run(h, { input: 'two' });
    // The system prompt is the shared prefix; the user message differs.
    expect(second.usage.cachedInputTokens).toBeGreaterThan(1000);
    expect(second.usage.cachedInputTokens).toBeLessThan(second.usage.inputTokens);
    // gpt-5.4-mini: $0.75 input, $0.075 cached input, $4.50 output per million tokens.
    expect(second.usage.costUsd).toBeCloseTo(cost(second.usage, 0.75, 0.075, 4.5), 15);
  });
});
