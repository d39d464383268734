/**
 * Cost: the price table, its overrides (the file's `prices`, --prices FILE, RuntimeOptions.prices),
 * and cost per model call, per node, per run, in the CLI's output and in the MCP result's _meta.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { BUILTIN_PRICES, priceLookup } from '../../src/providers/prices.js';
import { fakeVendors } from '../fakes/vendors.js';
import { hatch, load, runCli, tempDir } from '../helpers.js';
import { inMemory } from '../mcp/helpers.js';
import { drone, envOf, runtimeFor } from './helpers.js';

const fakes = fakeVendors();
afterEach(() => {
  fakes.openai.reset();
  fakes.anthropic.reset();
});

const nodeEnds = (events: RunEvent[]) =>
  events.filter((e): e is Extract<RunEvent, { type: 'node_end' }> => e.type === 'node_end');

describe('the price table', () => {
  it('knows the default models and prices dated snapshots as their base model', () => {
    const price = priceLookup();
    expect(price('openai', 'gpt-5.4-mini')).toEqual({ input: 0.75, cachedInput: 0.075, output: 4.5 });
    expect(price('anthropic', 'claude-sonnet-5-5')).toEqual({ input: 2, cachedInput: 0.2, output: 10 });
    expect(price('anthropic', 'claude-sonnet-5-5-20260101')).toEqual(price('anthropic', 'claude-sonnet-5-5'));
    expect(price('openai', 'gpt-5.4-mini-2026-03-17')).toEqual(price('openai', 'gpt-5.4-mini'));
    expect(price('anthropic', 'claude-opus-4')).toEqual(BUILTIN_PRICES['anthropic:claude-opus-4-0']);
  });

  it('knows nothing it is not told: unknown models, other vendors, prototype names', () => {
    const price = priceLookup();
    expect(price('openai', 'gpt-test')).toBeUndefined();
    expect(price('openai', 'gpt-5.4-mini-custom')).toBeUndefined();
    expect(price('anthropic', 'gpt-5.4-mini')).toBeUndefined();
    expect(price('sampling', '')).toBeUndefined();
    expect(price('openai', '__proto__')).toBeUndefined();
    expect(price('constructor', '')).toBeUndefined();
  });
});

describe('cost of a run', () => {
  it('a known model costs exactly what the table says, per call, per node and per run', async () => {
    fakes.openai.enqueue(
      { text: 'a', usage: { input: 1234, output: 567 } },
      { text: 'b', usage: { input: 10, output: 20 } },
    );
    const h = load(
      hatch([
        drone('One', { model: 'openai:gpt-5.4-mini', next: 'Two' }),
        drone('Two', { model: 'openai:gpt-5.4-mini' }),
      ]),
    );
    const events: RunEvent[] = [];
    const res = await runtimeFor(fakes).run(h, { input: 'x', onEvent: (e) => events.push(e) });
    const one = (1234 * 0.75 + 567 * 4.5) / 1_000_000;
    const two = (10 * 0.75 + 20 * 4.5) / 1_000_000;
    expect(one).toBe(0.003477);
    const [n1, n2] = nodeEnds(events);
    expect(n1?.usage?.costUsd).toBe(one);
    expect(n2?.usage?.costUsd).toBe(two);
    const calls = events.filter((e) => e.type === 'model_call');
    expect(calls.map((c) => c.usage?.costUsd)).toEqual([one, two]);
    expect(res.usage).toEqual({ inputTokens: 1244, outputTokens: 587, costUsd: one + two });
  });

  it('costs carry no floating-point noise, per call and summed over a run', async () => {
    // In binary floating point 5 tokens at $0.15 and 3 at $0.60 per million are $0.0000025499999999999997.
    expect((5 * 0.15 + 3 * 0.6) / 1_000_000).not.toBe(0.00000255);
    fakes.openai.enqueue(
      { text: 'a', usage: { input: 5, output: 3 } },
      { text: 'b', usage: { input: 5, output: 3 } },
      { text: 'c', usage: { input: 5, output: 3 } },
    );
    const model = 'openai:gpt-4o-mini';
    const h = load(
      hatch([
        drone('One', { model, next: 'Two' }),
        drone('Two', { model, next: 'Three' }),
        drone('Three', { model }),
      ]),
    );
    const events: RunEvent[] = [];
    const res = await runtimeFor(fakes).run(h, { input: 'x', onEvent: (e) => events.push(e) });
    expect(nodeEnds(events).map((e) => e.usage?.costUsd)).toEqual([0.00000255, 0.00000255, 0.00000255]);
    // 0.00000255 * 3 is 0.0000076499999999999995 when added up unrounded.
    expect(res.usage.costUsd).toBe(0.00000765);
    expect(JSON.stringify(res.usage)).toContain('"costUsd":0.00000765}');
  });

  it('an unknown model is counted in tokens only', async () => {
    fakes.openai.enqueue({ text: 'a', usage: { input: 100, output: 5 } });
    const events: RunEvent[] = [];
    const res = await runtimeFor(fakes).run(load(hatch([drone('One')])), {
      input: 'x',
      onEvent: (e) => events.push(e),
    });
    expect(res.usage).toEqual({ inputTokens: 100, outputTokens: 5 });
    expect(nodeEnds(events)[0]?.usage).toEqual({ inputTokens: 100, outputTokens: 5 });
  });

  it("the file's prices price its models; RuntimeOptions.prices (--prices) win over them", async () => {
    const h = load(
      hatch([drone('One')], {
        prices: { 'openai:gpt-test': { input: 1, output: 2, cached_input: 0.5 } },
      }),
    );
    fakes.openai.enqueue({ text: 'a', usage: { input: 1_000_000, output: 1_000_000 } });
    expect((await runtimeFor(fakes).run(h, { input: 'x' })).usage.costUsd).toBe(3);
    fakes.openai.enqueue({ text: 'a', usage: { input: 1_000_000, output: 1_000_000 } });
    const runtime = runtimeFor(fakes, { prices: { 'openai:gpt-test': { input: 10, output: 20 } } });
    expect((await runtime.run(h, { input: 'x' })).usage.costUsd).toBe(30);
  });

  it('over MCP, the result _meta carries the tokens and cost of the call', async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'priced.json'),
      JSON.stringify(hatch([drone('One', { model: 'openai:gpt-5.4-mini' })], { name: 'priced' })),
    );
    fakes.openai.enqueue({ text: 'done', usage: { input: 2000, output: 1000 } });
    const { client, close } = await inMemory(dir, { env: envOf(fakes) });
    try {
      const res = await client.callTool({ name: 'priced', arguments: { input: 'go' } });
      expect(res.isError).toBeFalsy();
      expect(res._meta?.['hatchery/usage']).toEqual({
        input_tokens: 2000,
        output_tokens: 1000,
        cached_input_tokens: 0,
        cost_usd: (2000 * 0.75 + 1000 * 4.5) / 1_000_000,
      });
    } finally {
      await close();
    }
  });
});

describe('run --prices and cost in the CLI output', () => {
  const setup = () => {
    const dir = tempDir();
    const file = path.join(dir, 'h.json');
    writeFileSync(file, JSON.stringify(hatch([drone('One')])));
    return { dir, file };
  };

  it('--prices prices an unknown model; the progress lines and --json show the cost', async () => {
    const { dir, file } = setup();
    const prices = path.join(dir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'openai:gpt-test': { input: 2, output: 8, cached_input: 1 } }));
    fakes.openai.enqueue({ text: 'a', usage: { input: 1000, output: 500 } });
    const r = await runCli(['run', file, '--input', 'x', '--prices', prices], { env: envOf(fakes) });
    expect(r.code).toBe(0);
    // (1000 * 2 + 500 * 8) / 1e6 = $0.006
    expect(r.stderr).toMatch(/\[1\] One \(.+, 1000\+500 tokens, \$0\.0060\)/);
    expect(r.stderr).toMatch(/done: 1 step, .+, 1000\+500 tokens, \$0\.0060/);
    fakes.openai.enqueue({ text: 'a', usage: { input: 1000, output: 500 } });
    const j = await runCli(['run', file, '--input', 'x', '--prices', prices, '--json'], {
      env: envOf(fakes),
    });
    expect(JSON.parse(j.stdout)).toMatchObject({ output: 'a', cost_usd: 0.006, usage: { costUsd: 0.006 } });
  });

  it('without a price the CLI shows tokens and no cost', async () => {
    const { file } = setup();
    fakes.openai.enqueue({ text: 'a', usage: { input: 1000, output: 500 } });
    const r = await runCli(['run', file, '--input', 'x', '--json'], { env: envOf(fakes) });
    const out = JSON.parse(r.stdout);
    expect(out.usage).toEqual({ inputTokens: 1000, outputTokens: 500 });
    expect(out.cost_usd).toBeUndefined();
  });

  it.each([
    ['not JSON', '{ nope', /--prices .*prices\.json: not valid JSON/],
    [
      'a price that is not a number',
      JSON.stringify({ 'openai:gpt-test': { input: 'cheap', output: 1 } }),
      /--prices .*prices\.json: "openai:gpt-test\/input": .*number/,
    ],
    [
      'a negative price',
      JSON.stringify({ 'openai:gpt-test': { input: -1, output: 1 } }),
      /"openai:gpt-test\/input": must be a price of 0 or more/,
    ],
    [
      'a key without a vendor',
      JSON.stringify({ 'gpt-test': { input: 1, output: 1 } }),
      /"gpt-test": must be "vendor:model"/,
    ],
    [
      'an unknown field',
      JSON.stringify({ 'openai:gpt-test': { input: 1, output: 1, cache: 1 } }),
      /"openai:gpt-test": unknown key "cache"/,
    ],
  ])('a --prices file with %s is a usage error naming the file and key', async (_what, text, message) => {
    const { dir, file } = setup();
    const prices = path.join(dir, 'prices.json');
    writeFileSync(prices, text);
    const r = await runCli(['run', file, '--input', 'x', '--prices', prices], { env: envOf(fakes) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it('a missing --prices file is a usage error', async () => {
    const { dir, file } = setup();
    const r = await runCli(['run', file, '--prices', path.join(dir, 'absent.json')], { env: envOf(fakes) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--prices .*absent\.json: cannot read the file/);
  });
});
