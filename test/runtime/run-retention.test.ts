/**
 * A finished run leaves nothing alive: not until the next young collection either. V8 copies what a
 * young collection finds alive (and the second time moves it to the old generation, which only a
 * full collection frees), so a run kept until then costs every later run its copying. Two ways runs
 * were kept: the result's `outputs` accessor as an object-literal getter (its closure held the run's
 * scope), and a fan-out's outputs written into the prototype of its branches' views (runtime/
 * run-result.ts, engine/scope.ts moveOut). Measured as what a forced young collection keeps after 8
 * runs against after 1: anything a run leaves behind grows with the runs.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { Hatchery } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load } from '../helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

const used = (name: string) =>
  getHeapSpaceStatistics().find((s) => s.space_name === name)?.space_used_size ?? 0;

/** Bytes a young collection keeps after `runs` runs of `h` (in the new space, or moved to the old). */
async function kept(runtime: Runtime, h: Hatchery, runs: number): Promise<number> {
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  const old = used('old_space');
  for (let i = 0; i < runs; i++) await runtime.run(h, { input: `go ${i}` });
  gc({ type: 'minor' });
  return used('new_space') + Math.max(0, used('old_space') - old);
}

const N = 1000;
const names = Array.from({ length: N }, (_, i) => `N${i}`);

describe('a finished run', () => {
  it('is not kept until the next young collection: a chain, and a wide fan-out', async () => {
    const runtime = new Runtime({
      // Each answer its own string, as a real model's.
      providers: {
        openai: new ScriptedProvider((req) => `${req.messages.at(-1)!.content}!`, { record: false }),
      },
      env: {},
    });
    const chain = load(
      hatch(
        names.map((name, i) => ({ name, usr_prompt: `{{ ctx.input }} ${name}`, next: names[i + 1] })),
        { max_steps: N + 1 },
      ),
    );
    const fanout = load(
      hatch(
        [
          { name: 'P', type: 'parallel', branches: names },
          ...names.map((name) => ({ name, usr_prompt: `{{ ctx.input }} ${name}` })),
        ],
        { max_steps: N + 1 },
      ),
    );
    for (const h of [chain, fanout]) {
      for (let i = 0; i < 20; i++) await runtime.run(h, { input: 'warm' });
      // The smallest of three tries each: another test's work in this process may add to one.
      const one = Math.min(await kept(runtime, h, 1), await kept(runtime, h, 1), await kept(runtime, h, 1));
      const eight = Math.min(await kept(runtime, h, 8), await kept(runtime, h, 8), await kept(runtime, h, 8));
      // Kept runs: ~41 bytes a node of each (chain), ~66 a branch (fan-out): 290 and 460 KB for 7 runs more.
      expect(eight - one, h === chain ? 'chain' : 'fan-out').toBeLessThan(64 * 1024);
    }
    await runtime.close();
  });
});
