/**
 * The steps made inside a step (a branch's model and tool calls) on the durable engine: kept under a
 * key made of their place, the same on every execution, so an execution that runs a branch again after
 * a crash takes the calls the branch had made from there instead of paying for them again.
 */
import { describe, expect, it } from 'vitest';
import { Meter } from '../../src/engine/meter.js';
import { DbosSteps, type StepMemos } from '../../src/runtime/durable/steps.js';

/** DBOS as it runs a step that was never checkpointed: it makes it. */
const uncheckpointed = { runStep: <R>(fn: () => Promise<R>): Promise<R> => fn() };

/** Memos in memory, as the store's table keeps them; `loads` counts the reads. */
function memory(): StepMemos & { kept: Map<string, { name: string; outcome: string }>; loads: number } {
  const kept = new Map<string, { name: string; outcome: string }>();
  return {
    kept,
    loads: 0,
    async load() {
      this.loads++;
      return new Map(kept);
    },
    async save(key, name, outcome) {
      kept.set(key, { name, outcome });
    },
  };
}

/**
 * A step holding two concurrent branches of two calls each, the first branch's calls the slower. The
 * execution "crashes" at call `hangAt`: the call never ends (a crash saves nothing), and `hung` tells.
 */
function fanOut(steps: DbosSteps, made: string[], hangAt?: { call: string; hung: () => void }) {
  const call = (what: string, ms: number) =>
    steps.step(`model ${what}`, async () => {
      await new Promise((r) => setTimeout(r, ms));
      if (what === hangAt?.call) {
        hangAt.hung();
        await new Promise(() => {});
      }
      made.push(what);
      return `answer ${what}`;
    });
  const branch = (b: string, ms: number) =>
    steps.step(`branch:${b}`, async () => [await call(`${b}1`, ms), await call(`${b}2`, ms)].join(' '));
  return steps.step('node:Fan', () => Promise.all([branch('a', 30), branch('b', 1)]));
}

describe('steps inside a step, after a crash', () => {
  it('are taken from what the crashed execution kept, in the same places though branches interleave', async () => {
    const memos = memory();
    const first: string[] = [];
    // The crash: a2 never ends, so neither branch a nor the fan-out step is checkpointed.
    await new Promise<void>(
      (hung) => void fanOut(new DbosSteps(uncheckpointed, { memos }), first, { call: 'a2', hung }),
    );
    expect(first.sort()).toEqual(['a1', 'b1', 'b2']);
    // b's calls end first, yet each call's key is its place: branch, then call within it.
    expect([...memos.kept.keys()].sort()).toEqual(['0.0.0', '0.1', '0.1.0', '0.1.1']);
    expect(memos.loads).toBe(0);

    const again: string[] = [];
    const out = await fanOut(new DbosSteps(uncheckpointed, { replaying: true, memos }), again);
    expect(out).toEqual(['answer a1 answer a2', 'answer b1 answer b2']);
    // Only the call that had not ended is made again; the memos are read once.
    expect(again).toEqual(['a2']);
    expect(memos.loads).toBe(1);
  });

  it('are made again where the run took another way (a step of another name at that place)', async () => {
    const memos = memory();
    await memos.save('0.0', 'tool:read_file', JSON.stringify({ ok: 'stale' }));
    const steps = new DbosSteps(uncheckpointed, { replaying: true, memos });
    const got = await steps.step('node:N', () => steps.step('model', async () => 'fresh'));
    expect(got).toBe('fresh');
    expect(memos.kept.get('0.0')).toEqual({ name: 'model', outcome: JSON.stringify({ ok: 'fresh' }) });
  });

  it('give back a kept failure as the same error, not a call made again', async () => {
    const memos = memory();
    const fail = async () => {
      throw new Error('the tool broke');
    };
    const first = new DbosSteps(uncheckpointed, { memos });
    await expect(first.step('node:N', () => first.step('tool:x', fail))).rejects.toThrow('the tool broke');
    let made = 0;
    const again = new DbosSteps(uncheckpointed, { replaying: true, memos });
    const err = again.step('node:N', () =>
      again.step('tool:x', async () => {
        made++;
        return 'works now';
      }),
    );
    await expect(err).rejects.toThrow('the tool broke');
    expect(made).toBe(0);
  });

  it("count what they spent toward the recovered run's meter once, and into the enclosing step", async () => {
    const memos = memory();
    const spend = (steps: DbosSteps, state: { meter: Meter }) =>
      steps.step('branch:0', () =>
        steps.step('model', async () => {
          state.meter.beforeModelCall('f.json', 'N');
          return 'x';
        }),
      );
    const first = { meter: new Meter(() => undefined), steps: 0 };
    const a = new DbosSteps(uncheckpointed, { memos });
    a.track(first);
    await spend(a, first);
    expect(first.meter.spend.model_calls).toBe(1);

    // Replayed: the kept call counts once, and the enclosing branch's checkpoint holds it.
    const state = { meter: new Meter(() => undefined), steps: 0 };
    const stored: unknown[] = [];
    const keeping = {
      async runStep<R>(fn: () => Promise<R>): Promise<R> {
        const out = await fn();
        stored.push(out);
        return out;
      },
    };
    const b = new DbosSteps(keeping, { replaying: true, memos });
    b.track(state);
    await spend(b, state);
    expect(state.meter.spend.model_calls).toBe(1);
    expect(stored).toEqual([{ ok: 'x', spent: { model_calls: 1 } }]);
  });

  it('are kept without the secret values they returned, which the run sees replaced', async () => {
    const memos = memory();
    const secret = 'hunter2-branch-secret';
    const steps = new DbosSteps(uncheckpointed, { memos, secrets: [secret] });
    const got = await steps.step('branch:0', () => steps.step('tool:env', async () => `pw=${secret}`));
    expect(got).toBe('pw=[redacted]');
    expect(JSON.stringify([...memos.kept.values()])).not.toContain(secret);
  });

  it('are never looked up by a first execution, which has nothing kept', async () => {
    const memos = memory();
    const steps = new DbosSteps(uncheckpointed, { memos });
    await steps.step('branch:0', () => steps.step('model', async () => 'x'));
    expect(memos.loads).toBe(0);
    expect(memos.kept.size).toBe(1);
  });
});
