import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { parseItems } from '../../src/nodes/map.js';
import { hatch, load } from '../helpers.js';
import { allAborted, echo, runtimeWith, testModel, userText } from './helpers.js';

describe('map', () => {
  it('runs the node once per JSON array element, with ctx.item (objects stay objects) and ctx.index', async () => {
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: '{{ ctx.input }}', node: 'Each', next: 'Show' },
        echo('Each', '{{ ctx.index }}:{{ ctx.item.title }}'),
        echo('Show', '{{ out.M[1] }} of {{ out.M | length }}; {{ out.M }}'),
      ]),
    );
    const res = await runtimeWith().run(h, { input: '[{"title":"alpha"},{"title":"beta"}]' });
    expect(res.outputs.M).toEqual(['0:alpha', '1:beta']);
    expect(res.output).toBe('1:beta of 2; ["0:alpha","1:beta"]');
  });

  it('reads a newline list, dropping empty lines, and maps a value computed by an earlier node', async () => {
    const h = load(
      hatch([
        echo('List', 'red\n\n  green \r\nblue\n', { next: 'M' }),
        { name: 'M', type: 'map', items: '{{ out.List }}', node: 'Each' },
        echo('Each', '{{ ctx.index }}={{ ctx.item }}'),
      ]),
    );
    const res = await runtimeWith().run(h);
    expect(res.output).toBe('["0=red","1=green","2=blue"]');
  });

  it('parses items: JSON arrays of any values, lists, and text that only looks like JSON', () => {
    expect(parseItems(' [1, "two", {"a": 3}, null] ')).toEqual([1, 'two', { a: 3 }, null]);
    expect(parseItems('[x] done\n[ ] todo')).toEqual(['[x] done', '[ ] todo']);
    expect(parseItems('{"a": 1}')).toEqual(['{"a": 1}']);
    expect(parseItems('   \n')).toEqual([]);
  });

  it('outputs [] for an empty list and goes on', async () => {
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: '[]', node: 'Each', next: 'After' },
        echo('Each', 'x'),
        echo('After', 'got {{ out.M }}'),
      ]),
    );
    expect((await runtimeWith().run(h)).output).toBe('got []');
  });

  it('runs at most `concurrency` items at once (default 4) and keeps the order of the items', async () => {
    for (const [concurrency, expected] of [
      [undefined, 4],
      [3, 3],
      [1, 1],
    ] as const) {
      // Early items are the slowest, so they finish last: the output must still follow the input order.
      const { model, inFlight } = testModel((req) => ({
        delay: 14 - Number(userText(req)),
        reply: `#${userText(req)}`,
      }));
      const items = Array.from({ length: 10 }, (_, i) => i);
      const h = load(
        hatch([
          {
            name: 'M',
            type: 'map',
            items: JSON.stringify(items),
            node: 'Each',
            ...(concurrency ? { concurrency } : {}),
          },
          { name: 'Each', usr_prompt: '{{ ctx.item }}' },
        ]),
      );
      const res = await runtimeWith(model).run(h);
      expect(inFlight.max).toBe(expected);
      expect(res.outputs.M).toEqual(items.map((i) => `#${i}`));
    }
  });

  it('runs each item along the node’s next chain in its own child scope', async () => {
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: 'a\nb', node: 'First' },
        echo('First', '{{ ctx.item }}1', { next: 'Second' }),
        echo('Second', '{{ out.First }}2'),
      ]),
    );
    const res = await runtimeWith().run(h);
    expect(res.outputs.M).toEqual(['a12', 'b12']);
    expect(res.outputs.First).toBeUndefined();
  });

  it('fails naming the item when one fails, cancelling the others and starting no more', async () => {
    // The other items never answer by themselves: the run can only settle by aborting them.
    const { model, inFlight } = testModel((req) =>
      userText(req) === 'bad' ? { delay: 10, fail: 'no' } : { hold: true },
    );
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: '["x","bad","y","z","w","v"]', node: 'Each', concurrency: 3 },
        { name: 'Each', usr_prompt: '{{ ctx.item }}' },
      ]),
    );
    const err = (await runtimeWith(model)
      .run(h)
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toMatchObject({ code: 'PROVIDER', context: { node: 'M', field: 'node', branch: 'Each[1]' } });
    expect(err.message).toBe('branch "Each[1]" failed: no');
    expect(model.callCount).toBe(3);
    expect(allAborted(model)).toBe(true);
    expect(inFlight.aborted).toBe(2);
    expect(inFlight.now).toBe(0);
  });

  it('with on_error: "continue" records the failure in place', async () => {
    const { model } = testModel((req) => (userText(req) === 'bad' ? { fail: 'no' } : { reply: 'ok' }));
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: 'x\nbad\ny', node: 'Each', on_error: 'continue' },
        { name: 'Each', usr_prompt: '{{ ctx.item }}' },
      ]),
    );
    const out = (await runtimeWith(model).run(h)).outputs.M as string[];
    expect(out[0]).toBe('ok');
    expect(out[1]).toMatch(/^error: .*node "Each": no$/);
    expect(out[2]).toBe('ok');
  });

  it('hands values back through save_output, like other child scopes', async () => {
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: 'only', node: 'Each', concurrency: 1, next: 'After' },
        echo('Each', '{{ ctx.item }}!', { save_output: 'lastItem' }),
        echo('After', '{{ ctx.lastItem }}'),
      ]),
    );
    expect((await runtimeWith().run(h)).output).toBe('only!');
  });

  it('nests inside a parallel branch: an item failure fails both levels and cancels the outer siblings', async () => {
    const { model } = testModel((req) =>
      userText(req) === 'bad' ? { delay: 10, fail: 'no' } : { hold: true },
    );
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['M', 'Other'] },
        { name: 'M', type: 'map', items: 'ok\nbad', node: 'Each' },
        { name: 'Each', usr_prompt: '{{ ctx.item }}' },
        { name: 'Other', usr_prompt: 'slow' },
      ]),
    );
    const err = (await runtimeWith(model)
      .run(h)
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe('branch "M" failed: branch "Each[1]" failed: no');
    expect(model.callCount).toBe(3);
    expect(allAborted(model)).toBe(true);
  });
});
