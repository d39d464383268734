/**
 * Each limit of a budget, tried against: the call that would go past it is never made (the fake
 * servers count the requests that arrive), and the run fails BUDGET_EXHAUSTED naming the limit.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { echo, hatch, load, tempDir } from '../helpers.js';
import { drone, exhausted, runtimeFor } from './helpers.js';

const fakes = fakeVendors();
afterEach(() => {
  fakes.openai.reset();
  fakes.anthropic.reset();
});

/** Three drones in a chain; each model call is scripted to use `tokens` tokens (input + output). */
function chain(budget: Record<string, number>, model = 'openai:gpt-test') {
  return load(
    hatch(
      [
        drone('One', { model, next: 'Two' }),
        drone('Two', { model, next: 'Three' }),
        drone('Three', { model }),
      ],
      { budget },
    ),
  );
}

describe('budget limits', () => {
  it('tokens: the call after the limit is spent is not made; the error names the limit, its value and the spend', async () => {
    fakes.openai.enqueue(
      { text: 'one', usage: { input: 500, output: 100 } },
      { text: 'two', usage: { input: 500, output: 100 } },
      { text: 'three', usage: { input: 500, output: 100 } },
    );
    const { err, events } = await exhausted(runtimeFor(fakes), chain({ tokens: 1000 }));
    // 600 < 1000 lets the second call start; at 1,200 the third is refused before any request.
    expect(fakes.openai.requests).toHaveLength(2);
    expect(err.message).toBe(
      'budget exhausted: tokens 1,200 of 1,000 spent (model_calls 2, tool_calls 0, cost $0.0000); raise budget.tokens or --budget-tokens',
    );
    expect(err.context).toMatchObject({
      limit: 'tokens',
      limitValue: 1000,
      node: 'Three',
      spent: { tokens: 1200, model_calls: 2, tool_calls: 0 },
    });
    expect(err.partial).toEqual({ One: 'one', Two: 'two' });
    const end = events.find((e) => e.type === 'run_end');
    expect(end).toMatchObject({ ok: false, code: 'BUDGET_EXHAUSTED' });
  });

  it('cost_usd: a priced model stops at the cost limit', async () => {
    // gpt-5.4-mini: $0.75 in, $4.50 out per million: 100,000 in + 10,000 out = $0.12 a call.
    for (let i = 0; i < 3; i++)
      fakes.openai.enqueue({ text: `c${i}`, usage: { input: 100_000, output: 10_000 } });
    const { err } = await exhausted(runtimeFor(fakes), chain({ cost_usd: 0.2 }, 'openai:gpt-5.4-mini'));
    expect(fakes.openai.requests).toHaveLength(2);
    expect(err.context.limit).toBe('cost_usd');
    expect(err.message).toMatch(
      /^budget exhausted: cost_usd \$0\.24 of \$0\.20 spent \(tokens 220,000, model_calls 2, tool_calls 0\); raise budget\.cost_usd or --budget-cost-usd$/,
    );
  });

  it('model_calls: the third call is never sent', async () => {
    const { err } = await exhausted(runtimeFor(fakes), chain({ model_calls: 2 }));
    expect(fakes.openai.requests).toHaveLength(2);
    expect(err.context).toMatchObject({ limit: 'model_calls', limitValue: 2, spent: { model_calls: 2 } });
    expect(Object.keys(err.partial)).toEqual(['One', 'Two']);
  });

  it('tool_calls: tool nodes stop at the limit and the refused tool never runs', async () => {
    const h = load(
      hatch([echo('A', 'a', { next: 'B' }), echo('B', 'b', { next: 'C' }), echo('C', 'c')], {
        budget: { tool_calls: 2 },
      }),
    );
    const { err, events } = await exhausted(runtimeFor(fakes), h);
    expect(err.context).toMatchObject({ limit: 'tool_calls', node: 'C', spent: { tool_calls: 2 } });
    expect(events.filter((e) => e.type === 'tool_call').map((e) => (e as { node: string }).node)).toEqual([
      'A',
      'B',
    ]);
    expect(err.partial).toEqual({ A: 'a', B: 'b' });
  });

  it('tool_calls: a drone cannot get past the limit by seeing the refusal as a tool error and asking again', async () => {
    for (let i = 0; i < 10; i++)
      fakes.openai.enqueue({ toolCalls: [{ name: 'echo', args: { text: `t${i}` } }] });
    const h = load(hatch([drone('Agent', { tools: ['echo'] })], { budget: { tool_calls: 2 } }));
    const { err } = await exhausted(runtimeFor(fakes), h);
    expect(err.context.limit).toBe('tool_calls');
    // Turns 1 and 2 ran their tool; turn 3 asked for a third, which ended the run: no fourth turn.
    expect(fakes.openai.requests).toHaveLength(3);
  });

  it('wall_ms: stops a model call in flight and reports BUDGET_EXHAUSTED, not ABORTED', async () => {
    fakes.openai.enqueue({ text: 'fast', usage: { input: 1, output: 1 } }, { text: 'slow', delayMs: 30_000 });
    const h = load(hatch([drone('Fast', { next: 'Slow' }), drone('Slow')], { budget: { wall_ms: 300 } }));
    const { err } = await exhausted(runtimeFor(fakes), h);
    expect(err.context).toMatchObject({ limit: 'wall_ms', limitValue: 300 });
    expect(err.message).toMatch(/^budget exhausted: wall_ms [\d,]+ ms of 300 ms taken/);
    expect(err.partial).toEqual({ Fast: 'fast' });
    // The slow call was cut off: the client hung up on the fake.
    await expect.poll(() => fakes.openai.disconnects).toBe(1);
  });

  it('wall_ms: stops a script process tree', async () => {
    const h = load(
      hatch(
        [{ name: 'Sleep', type: 'script', cmd: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'] }],
        {
          budget: { wall_ms: 300 },
        },
      ),
    );
    const { err } = await exhausted(runtimeFor(fakes), h);
    expect(err.context.limit).toBe('wall_ms');
  });

  it('wall_ms: parallel branches with on_error "continue" do not turn the budget into error outputs', async () => {
    fakes.openai.enqueue({ text: 'x', delayMs: 30_000 }, { text: 'y', delayMs: 30_000 });
    const h = load(
      hatch(
        [{ name: 'P', type: 'parallel', branches: ['A', 'B'], on_error: 'continue' }, drone('A'), drone('B')],
        { budget: { wall_ms: 300 } },
      ),
    );
    const { err } = await exhausted(runtimeFor(fakes), h);
    expect(err.context.limit).toBe('wall_ms');
    expect(err.partial).toEqual({});
  });

  it('a nested hatch: run spends from the same counter as its parent', async () => {
    const dir = tempDir();
    const sub = hatch(
      [drone('SubOne', { next: 'SubTwo' }), drone('SubTwo', { next: 'SubThree' }), drone('SubThree')],
      {
        name: 'sub',
      },
    );
    writeFileSync(path.join(dir, 'sub.json'), JSON.stringify(sub));
    const h = load(
      hatch(
        [
          drone('Top', { next: 'Call' }),
          { name: 'Call', type: 'tool', tool_name: 'hatch:sub.json', tool_args: { input: 'y' } },
        ],
        { budget: { model_calls: 3 } },
      ),
      dir,
    );
    const { err } = await exhausted(runtimeFor(fakes), h);
    // Top, SubOne and SubTwo: the nested run's third call would be the run tree's fourth.
    expect(fakes.openai.requests).toHaveLength(3);
    expect(err.context).toMatchObject({ limit: 'model_calls', node: 'SubThree' });
    expect(err.partial).toEqual({
      Top: 'echo: Top: x',
      'sub/SubOne': 'echo: SubOne: y',
      'sub/SubTwo': 'echo: SubTwo: y',
    });
  });

  it('the smallest of the file, run and runtime budgets wins', async () => {
    const h = chain({ tokens: 1_000_000, model_calls: 3 });
    const runtime = runtimeFor(fakes, { budget: { model_calls: 2, tokens: 5_000_000 } });
    const { err } = await exhausted(runtime, h, { budget: { tool_calls: 5 } });
    expect(err.context).toMatchObject({ limit: 'model_calls', limitValue: 2 });
    fakes.openai.reset();
    const { err: err2 } = await exhausted(runtime, h, { budget: { model_calls: 1 } });
    expect(err2.context).toMatchObject({ limit: 'model_calls', limitValue: 1 });
    expect(fakes.openai.requests).toHaveLength(1);
  });

  it('without a budget nothing is limited and the run succeeds', async () => {
    const res = await runtimeFor(fakes).run(chain({}), { input: 'x' });
    expect(res.output).toBe('echo: Three: x');
    expect(fakes.openai.requests).toHaveLength(3);
  });
});
