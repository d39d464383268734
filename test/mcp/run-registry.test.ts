import { describe, expect, it } from 'vitest';
import { jsonResult } from '../../src/mcp/results.js';
import { type RunOutcome, RunRegistry } from '../../src/mcp/runs.js';

const META = { hatchery: 'h', file: '/tmp/h.json' };
const done = (): RunOutcome => ({ state: 'succeeded', result: jsonResult({ ok: true }) });

/** Starts a run that ends when `release` is called. */
function held(reg: RunRegistry) {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const run = reg.start(META, new AbortController(), async () => {
    await gate;
    return done();
  });
  return { run, release };
}

describe('background run registry limits', () => {
  it('keeps at most maxKept finished runs, the newest, and never drops a running one', async () => {
    const reg = new RunRegistry({ maxKept: 3 });
    const running = held(reg);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = reg.start(META, new AbortController(), async () => done());
      await r.done;
      ids.push(r.id);
    }
    const kept = reg.all();
    expect(kept.filter((r) => r.endedAt !== undefined).map((r) => r.id)).toEqual(ids.slice(-3).reverse());
    expect(reg.get(running.run.id)).toBe(running.run);
    running.release();
    await running.run.done;
  });

  it('drops finished runs older than maxAgeMs, even when few runs are kept', async () => {
    const reg = new RunRegistry({ maxAgeMs: 30 });
    const r = reg.start(META, new AbortController(), async () => done());
    await r.done;
    expect(reg.get(r.id)).toBe(r);
    await new Promise((res) => setTimeout(res, 80));
    expect(reg.get(r.id)).toBeUndefined();
  });
});
