import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { hatch, load } from '../helpers.js';
import { runtimeWith, userText } from './helpers.js';

/**
 * Wide fan-outs of branches that settle at once (instant models, fast tools): each branch runs to its
 * end while later ones start, so a run never holds every branch half-way (that was most of the memory
 * and the GC of a 10,000-branch fan-out); outputs, order, failures and cancellation stay as they were.
 */
const names = (n: number) => Array.from({ length: n }, (_, i) => `B${i}`);

function wide(n: number, extra: Record<string, unknown> = {}) {
  const bs = names(n);
  return load(
    hatch(
      [
        { name: 'P', type: 'parallel', branches: bs, ...extra },
        ...bs.map((name) => ({ name, usr_prompt: name })),
      ],
      { max_steps: n + 1 },
    ),
  );
}

describe('wide fan-outs', () => {
  it('1,500 instant branches: every output in branch order, and only a few dozen branches half-way at any time', async () => {
    const n = 1500;
    const model = new ScriptedProvider((req) => `re ${userText(req)}`, { record: false });
    let open = 0;
    let most = 0;
    const onEvent = (e: RunEvent) => {
      if (e.type === 'node_start' && e.node !== 'P') most = Math.max(most, ++open);
      else if (e.type === 'node_end' && e.node !== 'P') open--;
    };
    const res = await runtimeWith(model).run(wide(n), { onEvent });
    expect(res.steps).toBe(n + 1);
    expect(res.outputs.B0).toBe('re B0');
    expect(res.outputs.B1499).toBe('re B1499');
    const joined = String(res.outputs.P);
    expect(joined.startsWith('## B0\nre B0\n\n## B1\nre B1\n\n')).toBe(true);
    expect(joined.endsWith('## B1499\nre B1499')).toBe(true);
    // Before, all 1,500 had started before the first ended (and every branch past step 1,023 also
    // waited for a turn of the event loop, all of them half-way at once).
    expect(most).toBeLessThan(64);
  });

  it('branches that wait (model calls in flight) all start at once, as before', async () => {
    const model = new ScriptedProvider(() => 'ok', { delayMs: 40, record: false });
    let open = 0;
    let most = 0;
    const onEvent = (e: RunEvent) => {
      if (e.type === 'node_start' && e.node !== 'P') most = Math.max(most, ++open);
      else if (e.type === 'node_end' && e.node !== 'P') open--;
    };
    const res = await runtimeWith(model).run(wide(200), { onEvent });
    expect(most).toBe(200);
    expect(res.steps).toBe(201);
  });

  it('after a branch fails, siblings not started yet never start (no model call for them)', async () => {
    const model = new ScriptedProvider((req) =>
      userText(req) === 'B3' ? new HatcheryError('PROVIDER', 'model exploded') : 'ok',
    );
    const err = (await runtimeWith(model)
      .run(wide(500))
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toMatchObject({ code: 'PROVIDER', context: { node: 'P', branch: 'B3' } });
    expect(err.message).toBe('branch "B3" failed: model exploded');
    expect(model.callCount).toBeGreaterThanOrEqual(4);
    expect(model.callCount).toBeLessThan(60);
  });

  it('with on_error: "continue" every branch runs and each failure is its own output, in order', async () => {
    const model = new ScriptedProvider((req) => {
      const i = Number(userText(req).slice(1));
      return i % 3 === 0 ? new HatcheryError('PROVIDER', `no ${i}`) : `ok ${i}`;
    });
    const res = await runtimeWith(model).run(wide(600, { on_error: 'continue' }));
    expect(model.callCount).toBe(600);
    expect(res.outputs.B0).toMatch(/^error: .*no 0$/);
    expect(res.outputs.B1).toBe('ok 1');
    expect(res.outputs.B599).toBe('ok 599');
    expect(res.outputs.B597).toMatch(/^error: .*no 597$/);
  });

  it('a run cancelled while its fan-out is still starting branches ends with ABORTED; no branch starts after', async () => {
    const ac = new AbortController();
    let after = 0;
    const model = new ScriptedProvider((req) => {
      if (ac.signal.aborted) after++;
      if (userText(req) === 'B10') ac.abort();
      return 'ok';
    });
    const err = (await runtimeWith(model)
      .run(wide(500), { signal: ac.signal })
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toBeInstanceOf(HatcheryError);
    expect(err.code).toBe('ABORTED');
    expect(after).toBe(0);
    expect(model.callCount).toBeLessThan(60);
  });

  it('leaves nothing attached to the caller’s signal once the fan-out is over', async () => {
    const ac = new AbortController();
    const model = new ScriptedProvider(() => 'ok', { delayMs: 5, record: false });
    const res = await runtimeWith(model).run(wide(50), { signal: ac.signal });
    expect(res.steps).toBe(51);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('a map of 2,500 items with concurrency 2,500 keeps the item order', async () => {
    const items = Array.from({ length: 2500 }, (_, i) => i);
    const h = load(
      hatch(
        [
          { name: 'M', type: 'map', items: JSON.stringify(items), node: 'Each', concurrency: 2500 },
          { name: 'Each', usr_prompt: 'item {{ ctx.item }}' },
        ],
        { max_steps: 2501 },
      ),
    );
    const model = new ScriptedProvider((req) => userText(req).toUpperCase(), { record: false });
    const res = await runtimeWith(model).run(h);
    const out = res.outputs.M as string[];
    expect(out).toHaveLength(2500);
    expect(out[0]).toBe('ITEM 0');
    expect(out[2499]).toBe('ITEM 2499');
  });
});
