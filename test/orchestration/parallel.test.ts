import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { hatch, load } from '../helpers.js';
import { allAborted, echo, runtimeWith, testModel, userText } from './helpers.js';

describe('parallel', () => {
  it('runs the branches, puts each output in out.<branch> and joins them under headings by default', async () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Show' },
        echo('A', 'a says {{ ctx.input }}'),
        echo('B', 'b says {{ ctx.input }}'),
        echo('Show', '{{ out.A }} | {{ out.B }} | {{ out.P }}'),
      ]),
    );
    const res = await runtimeWith().run(h, { input: 'hi' });
    expect(res.outputs.P).toBe('## A\na says hi\n\n## B\nb says hi');
    expect(res.output).toBe('a says hi | b says hi | ## A\na says hi\n\n## B\nb says hi');
    expect(res.steps).toBe(4);
  });

  it('joins with a template that sees branches as { name, output }', async () => {
    const h = load(
      hatch([
        {
          name: 'P',
          type: 'parallel',
          branches: ['A', 'B'],
          join: '{% for b in branches %}{{ b.name }}={{ b.output }};{% endfor %} ({{ ctx.input }})',
        },
        echo('A', 'one'),
        echo('B', 'two'),
      ]),
    );
    expect((await runtimeWith().run(h, { input: 'x' })).output).toBe('A=one;B=two; (x)');
  });

  it('runs each branch along its next chain; out.<branch> is the chain’s final output', async () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Show' },
        echo('A', 'draft', { next: 'A2' }),
        echo('A2', 'polished {{ out.A }}', { save_output: 'fromA' }),
        echo('B', 'b'),
        echo('Show', '{{ out.A }} / {{ out.B }} / {{ ctx.fromA }}'),
      ]),
    );
    const res = await runtimeWith().run(h);
    expect(res.output).toBe('polished draft / b / polished draft');
    // Intermediate outputs of a branch stay in the branch.
    expect(res.outputs.A2).toBeUndefined();
  });

  it('really runs the branches concurrently (model calls overlap) and counts each call once', async () => {
    const { model, inFlight } = testModel(() => ({ delay: 30 }));
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B', 'C'] },
        { name: 'A', usr_prompt: 'a' },
        { name: 'B', usr_prompt: 'b' },
        { name: 'C', usr_prompt: 'c' },
      ]),
    );
    const res = await runtimeWith(model).run(h);
    expect(inFlight.max).toBe(3);
    // Priced as the default model, gpt-5.4-mini ($0.75 in, $4.50 out per million tokens).
    expect(res.usage).toEqual({ inputTokens: 3, outputTokens: 3, costUsd: expect.closeTo(3 * 5.25e-6, 15) });
    expect(res.output).toBe('## A\nre: a\n\n## B\nre: b\n\n## C\nre: c');
  });

  it('fails with the branch named when one fails, and cancels the slow siblings at once', async () => {
    // The slow siblings never answer by themselves: the run can only settle by aborting them.
    const { model, inFlight } = testModel((req) =>
      userText(req) === 'boom' ? { delay: 10, fail: 'model exploded' } : { hold: true },
    );
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['Slow1', 'Bad', 'Slow2'] },
        { name: 'Slow1', usr_prompt: 'slow' },
        { name: 'Bad', usr_prompt: 'boom' },
        { name: 'Slow2', usr_prompt: 'slow' },
      ]),
    );
    const err = (await runtimeWith(model)
      .run(h)
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toMatchObject({ code: 'PROVIDER', context: { node: 'P', field: 'branches', branch: 'Bad' } });
    expect(err.message).toBe('branch "Bad" failed: model exploded');
    expect(allAborted(model)).toBe(true);
    // Both held siblings saw their request aborted and were no longer in flight when the run rejected.
    expect(inFlight.aborted).toBe(2);
    expect(inFlight.now).toBe(0);
  });

  it('names the failing node inside a branch chain', async () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A'] },
        echo('A', 'ok', { next: 'A2' }),
        // ctx.input is a string, so the lookup fails only at run time.
        echo('A2', '{{ ctx.input.nope }}'),
      ]),
    );
    const err = (await runtimeWith()
      .run(h, { input: 'x' })
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('UNDEFINED_VARIABLE');
    expect(err.message).toMatch(
      /^branch "A" failed: node "A2": tool_args\/text: undefined variable `ctx.input.nope`/,
    );
  });

  it('with on_error: "continue" records the error as the branch output and keeps the others', async () => {
    const { model } = testModel((req) =>
      userText(req) === 'boom' ? { fail: 'model exploded' } : { delay: 20, reply: 'fine' },
    );
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['Good', 'Bad'], on_error: 'continue', next: 'Show' },
        { name: 'Good', usr_prompt: 'ok' },
        { name: 'Bad', usr_prompt: 'boom' },
        echo('Show', '{{ out.Good }} / {{ out.Bad }}'),
      ]),
    );
    const res = await runtimeWith(model).run(h);
    expect(res.output).toMatch(/^fine \/ error: .*node "Bad": model exploded$/);
    expect(res.outputs.P).toContain('## Good\nfine\n\n## Bad\nerror: ');
    expect(model.calls.some((c) => c.signal.aborted)).toBe(false);
  });

  it('stops every branch fast when the whole run is cancelled, and rejects with ABORTED', async () => {
    const { model, inFlight } = testModel(() => ({ hold: true }));
    const names = Array.from({ length: 20 }, (_, i) => `B${i}`);
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: names, next: 'After' },
        ...names.map((name) => ({ name, usr_prompt: name })),
        echo('After', 'never'),
      ]),
    );
    const ac = new AbortController();
    // Cancel once every branch is waiting on a model that never answers by itself.
    const run = runtimeWith(model).run(h, { signal: ac.signal });
    while (inFlight.now < 20) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    const err = (await run.catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('ABORTED');
    expect(model.callCount).toBe(20);
    expect(allAborted(model)).toBe(true);
    expect(inFlight.aborted).toBe(20);
    expect(inFlight.now).toBe(0);
  });

  it('adds one listener to the run signal per fan-out, not one per branch, and removes it', async () => {
    const counts: number[] = [];
    const signal = new AbortController().signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    let live = 0;
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      live++;
      counts.push(live);
      add(...args);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      live--;
      remove(...args);
    }) as typeof signal.removeEventListener;
    const names = Array.from({ length: 50 }, (_, i) => `B${i}`);
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: names },
        ...names.map((name) => ({ name, usr_prompt: name })),
      ]),
    );
    await runtimeWith(new ScriptedProvider(() => 'ok', { delayMs: 5, record: false })).run(h, { signal });
    expect(Math.max(...counts)).toBe(1);
    expect(live).toBe(0);
  });

  it('shares the step budget: a fan-out wider than max_steps fails with MAX_STEPS, even with continue', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `B${i}`);
    for (const on_error of ['fail', 'continue']) {
      const h = load(
        hatch([{ name: 'P', type: 'parallel', branches: names, on_error }, ...names.map((n) => echo(n, n))], {
          max_steps: 5,
        }),
      );
      const err = (await runtimeWith()
        .run(h)
        .catch((e: unknown) => e)) as HatcheryError;
      expect(err.code).toBe('MAX_STEPS');
      expect(err.message).toMatch(/^branch "B\d" failed: the run reached max_steps \(5\)/);
    }
  });

  it('emits node events for branch nodes', async () => {
    const events: RunEvent[] = [];
    const h = load(
      hatch([{ name: 'P', type: 'parallel', branches: ['A', 'B'] }, echo('A', 'a'), echo('B', 'b')]),
    );
    await runtimeWith().run(h, { onEvent: (e) => events.push(e) });
    const started = events.filter((e) => e.type === 'node_start').map((e) => (e as { node: string }).node);
    expect(started).toEqual(['P', 'A', 'B']);
  });

  // The time it takes (about 20 ms, not 2 s) is measured by bench/fanout.ts; this checks the overlap.
  it('runs 100 branches that each wait 20 ms on the model all at once', async () => {
    const names = Array.from({ length: 100 }, (_, i) => `B${i}`);
    const h = load(
      hatch(
        [
          { name: 'P', type: 'parallel', branches: names },
          ...names.map((name) => ({ name, usr_prompt: `{{ ctx.input }} ${name}` })),
        ],
        { max_steps: 101 },
      ),
    );
    const { model, inFlight } = testModel((req) => ({ delay: 20, reply: userText(req) }));
    const res = await runtimeWith(model).run(h, { input: 'go' });
    expect(inFlight.max).toBe(100);
    expect(res.steps).toBe(101);
    expect(res.usage.inputTokens).toBe(100);
    expect(res.outputs.B99).toBe('go B99');
  });
});
