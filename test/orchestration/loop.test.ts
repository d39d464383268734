import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { hatch, load } from '../helpers.js';
import { echo, runtimeWith } from './helpers.js';

/** Draft -> Critic, refined until the critic approves. */
const refine = (loop: Record<string, unknown> = {}) =>
  hatch([
    { name: 'Refine', type: 'loop', body: 'Draft', until: 'APPROVED', next: 'Final', ...loop },
    {
      name: 'Draft',
      usr_prompt: 'iteration {{ ctx.iteration }}; feedback: {{ ctx.feedback | default("none") }}',
      save_output: 'draft',
      next: 'Critic',
    },
    { name: 'Critic', usr_prompt: 'review: {{ ctx.draft }}', save_output: 'feedback' },
    echo('Final', 'final: {{ ctx.draft }} ({{ out.Refine }})'),
  ]);

describe('loop', () => {
  it('repeats the body until the word appears; save_output carries over between iterations', async () => {
    const model = new ScriptedProvider([
      'draft 1',
      'too long',
      'draft 2',
      'UNAPPROVED, APPROVEDISH',
      'draft 3',
      'APPROVED.',
    ]);
    const res = await runtimeWith(model).run(load(refine()));
    expect(model.calls.map((c) => c.messages[0]!.content)).toEqual([
      'iteration 1; feedback: none',
      'review: draft 1',
      'iteration 2; feedback: too long',
      'review: draft 2',
      'iteration 3; feedback: UNAPPROVED, APPROVEDISH',
      'review: draft 3',
    ]);
    expect(res.output).toBe('final: draft 3 (APPROVED.)');
    expect(res.steps).toBe(1 + 6 + 1);
  });

  it('matches the word as a whole word only', async () => {
    const model = new ScriptedProvider(['d', 'UNAPPROVED', 'd', 'APPROVED_LATER', 'd', 'ok, APPROVED']);
    const res = await runtimeWith(model).run(load(refine()));
    expect(model.callCount).toBe(6);
    expect(res.output).toBe('final: d (ok, APPROVED)');
  });

  it('stops when a template until renders true', async () => {
    const h = load(
      hatch([
        { name: 'L', type: 'loop', body: 'Step', until: '{{ ctx.n | int >= 3 }}' },
        echo('Step', '{{ ctx.iteration }}', { save_output: 'n' }),
      ]),
    );
    const res = await runtimeWith().run(h);
    expect(res.output).toBe('3');
    expect(res.steps).toBe(4);
  });

  it('fails with MAX_ITERATIONS naming the node and the limit when until is never met', async () => {
    const h = load(
      hatch([
        { name: 'L', type: 'loop', body: 'Step', until: 'DONE', max_iterations: 3 },
        echo('Step', 'still working'),
      ]),
    );
    const err = (await runtimeWith()
      .run(h)
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toMatchObject({ code: 'MAX_ITERATIONS', context: { node: 'L', field: 'max_iterations' } });
    expect(err.message).toContain('loop "L" reached max_iterations (3)');
    expect(err.message).toContain('"on_limit"');
  });

  it('defaults to 10 iterations', async () => {
    const h = load(
      hatch([{ name: 'L', type: 'loop', body: 'Step', until: 'DONE' }, echo('Step', '{{ ctx.iteration }}')]),
    );
    await expect(runtimeWith().run(h)).rejects.toMatchObject({
      code: 'MAX_ITERATIONS',
      message: expect.stringContaining('(10)'),
    });
  });

  it('goes to on_limit (no max_visits needed) with the last output when the limit is reached', async () => {
    const h = load(
      hatch([
        {
          name: 'L',
          type: 'loop',
          body: 'Step',
          until: 'DONE',
          max_iterations: 2,
          on_limit: 'GiveUp',
          next: 'Ok',
        },
        echo('Step', 'try {{ ctx.iteration }}'),
        echo('GiveUp', 'gave up after {{ out.L }}'),
        echo('Ok', 'ok'),
      ]),
    );
    expect((await runtimeWith().run(h)).output).toBe('gave up after try 2');
  });

  it('propagates a failure in the body', async () => {
    const h = load(
      hatch([
        { name: 'L', type: 'loop', body: 'Step', until: 'DONE' },
        echo('Step', '{{ ctx.input.missing }}'),
      ]),
    );
    await expect(runtimeWith().run(h, { input: 'x' })).rejects.toMatchObject({
      code: 'UNDEFINED_VARIABLE',
      context: { node: 'Step' },
    });
  });

  it('counts body nodes against max_steps', async () => {
    const h = load(
      hatch(
        [{ name: 'L', type: 'loop', body: 'Step', until: 'DONE', max_iterations: 100 }, echo('Step', 'x')],
        { max_steps: 10 },
      ),
    );
    await expect(runtimeWith().run(h)).rejects.toMatchObject({ code: 'MAX_STEPS' });
  });
});
