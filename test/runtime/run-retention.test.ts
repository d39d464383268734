/**
 * A finished run leaves nothing alive: not until the next young collection either. V8 copies what a
 * young collection finds alive (and the second time moves it to the old generation, which only a
 * full collection frees), so a run kept until then costs every later run its copying. Two ways runs
 * were kept: the result's `outputs` accessor as an object-literal getter (its closure held the run's
 * scope), and a fan-out's outputs written into the prototype of its branches' views (runtime/
 * run-result.ts, engine/scope.ts moveOut). Measured in a process of its own (test/fixtures/
 * run-retention.ts) as what a forced young collection keeps after 8 runs against after 1: anything a
 * run leaves behind grows with the runs.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const SCRIPT = new URL('../fixtures/run-retention.ts', import.meta.url).pathname;

describe('a finished run', () => {
  it('is not kept until the next young collection: a chain, and a wide fan-out', () => {
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64', '--import', 'tsx', SCRIPT],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const kept = JSON.parse(out.trim().split('\n').pop()!) as Record<string, { one: number; eight: number }>;
    // Kept runs: ~41 bytes a node of each (chain), ~66 a branch (fan-out): 290 and 460 KB for 7 runs more.
    for (const name of ['chain', 'fanout']) {
      const { one, eight } = kept[name]!;
      expect(eight - one, name).toBeLessThan(64 * 1024);
    }
  });
});
