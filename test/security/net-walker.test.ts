import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { hatch, load } from '../helpers.js';
import { echo, runtimeWith } from '../orchestration/helpers.js';

/** Two echo banelings calling each other forever: every node settles at once, with no real I/O. */
const spin = () =>
  load(
    // B's output always names A, so the way out to END is never taken.
    hatch([echo('A', 'a', { next: 'B' }), echo('B', 'A', { next: ['A', 'END'] })], {
      max_steps: 10_000_000,
    }),
  );

describe('walker and the event loop', () => {
  it('a cycle of instant nodes lets a timer cancel it and other timers tick', async () => {
    const controller = new AbortController();
    let ticks = 0;
    const interval = setInterval(() => ticks++, 5);
    setTimeout(() => controller.abort(), 50);
    let steps = -1;
    let error: unknown;
    try {
      const res = await runtimeWith().run(spin(), {
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'node_start') steps = e.step;
        },
      });
      steps = res.steps;
    } catch (err) {
      error = err;
    } finally {
      clearInterval(interval);
    }
    // Before the fix the abort timer never ran: the walk went on to max_steps (or MAX_STEPS) first.
    expect(error).toBeInstanceOf(HatcheryError);
    expect((error as HatcheryError).code).toBe('ABORTED');
    expect(steps).toBeLessThan(10_000_000);
    expect(ticks).toBeGreaterThan(0);
  });
});
