import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load } from '../helpers.js';

async function path(def: unknown, input: string, maxSteps?: number): Promise<string[]> {
  const runtime = new Runtime({ env: {} });
  const seen: string[] = [];
  await runtime.run(load(def), {
    input,
    maxSteps,
    onEvent: (e) => {
      if (e.type === 'node_start') seen.push(e.node);
    },
  });
  return seen;
}

const router = hatch([
  echo('Route', '{{ ctx.input }}', { next: ['Bug', 'Question', 'Other'] }),
  echo('Bug', 'bug'),
  echo('Question', 'question'),
  echo('Other', 'other'),
]);

describe('routing with a next list', () => {
  it('goes to the first listed name found in the output, not the first in the text', async () => {
    expect(await path(router, 'A Question about a Bug')).toEqual(['Route', 'Bug']);
    expect(await path(router, 'just a Question')).toEqual(['Route', 'Question']);
  });

  it('matches whole words only, case-sensitively', async () => {
    expect(await path(router, 'Bugfix questions about bugs')).toEqual(['Route', 'Other']);
    expect(await path(router, '(Bug).')).toEqual(['Route', 'Bug']);
  });

  it('falls back to the last entry', async () => {
    expect(await path(router, 'nothing to see')).toEqual(['Route', 'Other']);
  });

  it('ends the run at END, from a match or as the default', async () => {
    const def = hatch([echo('Check', '{{ ctx.input }}', { next: ['Fix', 'END'] }), echo('Fix', 'fixed')]);
    expect(await path(def, 'needs a Fix')).toEqual(['Check', 'Fix']);
    expect(await path(def, 'all good')).toEqual(['Check']);
    const endFirst = hatch([
      echo('Check', '{{ ctx.input }}', { next: ['END', 'Fix'] }),
      echo('Fix', 'fixed'),
    ]);
    expect(await path(endFirst, 'END of story')).toEqual(['Check']);
  });

  it("returns the last node's output as the run's output", async () => {
    const runtime = new Runtime({ env: {} });
    expect((await runtime.run(load(router), { input: 'a Question' })).output).toBe('question');
  });
});

describe('cycles and limits', () => {
  const loop = (extra = {}) =>
    // Pong's output always names Ping, so the way out to END is never taken: only max_steps stops it.
    hatch([echo('Ping', 'ping', { next: 'Pong' }), echo('Pong', 'Ping', { next: ['Ping', 'END'] })], extra);

  it('stops a cycle after max_steps (default 100) with an error naming the node and the limit', async () => {
    const runtime = new Runtime({ env: {} });
    const err = await runtime.run(load(loop())).catch((e: unknown) => e as HatcheryError);
    expect(err).toBeInstanceOf(HatcheryError);
    expect((err as HatcheryError).code).toBe('MAX_STEPS');
    expect((err as HatcheryError).message).toContain('max_steps (100)');
    expect((err as HatcheryError).context.node).toBe('Ping');
  });

  it('takes max_steps from the file, and the run option over the file', async () => {
    const runtime = new Runtime({ env: {} });
    const h = load(loop({ max_steps: 7 }));
    await expect(runtime.run(h)).rejects.toMatchObject({
      code: 'MAX_STEPS',
      message: expect.stringContaining('(7)'),
    });
    await expect(runtime.run(h, { maxSteps: 3 })).rejects.toMatchObject({
      message: expect.stringContaining('(3)'),
    });
    const cli = new Runtime({ env: {}, maxSteps: 5 });
    await expect(cli.run(h)).rejects.toMatchObject({ message: expect.stringContaining('(5)') });
  });

  it('runs a refine loop that a model ends', async () => {
    const model = new ScriptedProvider(['draft 1', 'NEEDS WORK', 'draft 2', 'APPROVED']);
    const h = load(
      hatch([
        { name: 'Write', usr_prompt: 'write {{ ctx.input }}', next: 'Review', save_output: 'draft' },
        { name: 'Review', usr_prompt: 'review {{ ctx.draft }}', next: ['APPROVED', 'Write'] },
        echo('APPROVED', 'final: {{ ctx.draft }}'),
      ]),
    );
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const res = await runtime.run(h, { input: 'a poem' });
    expect(res.output).toBe('final: draft 2');
    expect(res.steps).toBe(5);
    expect(model.calls.map((c) => c.messages[0]?.content)).toEqual([
      'write a poem',
      'review draft 1',
      'write a poem',
      'review draft 2',
    ]);
  });

  it('enforces max_visits, going to on_limit when given', async () => {
    const runtime = new Runtime({ env: {} });
    const h = load(
      hatch([
        echo('Ping', 'ping', { next: 'Pong', max_visits: 3, on_limit: 'Done' }),
        echo('Pong', 'pong', { next: 'Ping' }),
        echo('Done', 'stopped after {{ ctx.input }}'),
      ]),
    );
    const res = await runtime.run(h, { input: 'three' });
    expect(res.output).toBe('stopped after three');
    expect(res.steps).toBe(7);
    const strict = load(hatch([echo('Ping', 'ping', { next: 'Ping', max_visits: 2 })]));
    await expect(runtime.run(strict)).rejects.toMatchObject({
      code: 'MAX_VISITS',
      context: { node: 'Ping' },
    });
  });
});
