/** The shared cancellation helpers of core/cancel.ts and errors.ts. */
import { describe, expect, it } from 'vitest';
import { abortedError, LinkedController, raceSignal, waitAtMost } from '../../src/core/cancel.js';
import { HatcheryError } from '../../src/core/errors.js';

describe('cancellation helpers', () => {
  it('waitAtMost says whether the work ended in time, and stops waiting when the signal fires', async () => {
    expect(await waitAtMost(Promise.resolve(), 5_000)).toBe(true);
    expect(await waitAtMost(new Promise(() => {}), 10)).toBe(false);
    const stop = new AbortController();
    const waiting = waitAtMost(new Promise(() => {}), 60_000, stop.signal);
    stop.abort();
    expect(await waiting).toBe(false);
    await expect(waitAtMost(Promise.reject(new Error('boom')), 5_000)).rejects.toThrow('boom');
  });

  it('raceSignal rejects with the error the abort stands for', async () => {
    const c = new AbortController();
    const pending = raceSignal(new Promise(() => {}), c.signal);
    const reason = new HatcheryError('TIMEOUT', 'too slow');
    c.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(() => raceSignal(Promise.resolve(1), c.signal)).toThrow('too slow');
    const plain = new AbortController();
    plain.abort();
    expect(abortedError(plain.signal)).toMatchObject({ code: 'ABORTED', message: 'the run was cancelled' });
    expect(abortedError(new AbortController().signal)).toBeUndefined();
  });

  it('LinkedController follows its signal until unlinked', () => {
    const outer = new AbortController();
    const controller = new LinkedController(outer.signal);
    controller.unlink();
    outer.abort();
    expect(controller.signal.aborted).toBe(false);
    const again = new LinkedController(outer.signal);
    expect(again.signal.aborted).toBe(true);
    expect(new LinkedController().signal.aborted).toBe(false);
  });
});
