// Fan-out overhead: a parallel node whose branches are drones answered by a provider that waits a fixed
// time (a setTimeout that honours the signal). Ideally N branches × D ms take D ms; the rest is the
// runtime's own cost: child scopes, walks, templates, the shared AbortController, the join.
// Usage: node --import tsx bench/fanout.ts

import type { Hatchery } from '../src/engine/contracts.js';
import { loadHatcheryObject } from '../src/loader/load.js';
import { ScriptedProvider } from '../src/providers/scripted.js';
import { Runtime } from '../src/runtime/runtime.js';
import { median } from './lib/stats.js';

function fanout(n: number): Hatchery {
  const names = Array.from({ length: n }, (_, i) => `B${i}`);
  const res = loadHatcheryObject(
    {
      name: `fanout_${n}`,
      desc: 'bench',
      max_steps: n + 1,
      nodes: [
        { name: 'P', type: 'parallel', branches: names },
        ...names.map((name) => ({ name, usr_prompt: `{{ ctx.input }} ${name}` })),
      ],
    },
    '/tmp/bench-fanout.json',
  );
  if (!res.ok) throw res.error;
  return res.hatchery;
}

async function measure(n: number, delayMs: number, runs: number): Promise<number[]> {
  const model = new ScriptedProvider(() => 'ok', { delayMs, record: false });
  const runtime = new Runtime({ providers: { openai: model }, env: {} });
  const h = fanout(n);
  for (let i = 0; i < 3; i++) await runtime.run(h, { input: 'go' });
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await runtime.run(h, { input: 'go' });
    times.push(performance.now() - t0);
  }
  return times;
}

/** The floor: 100 bare 20 ms timers started together (Node's timers fire on a ~1 ms grid). */
async function bareTimers(runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => new Promise((r) => setTimeout(r, 20))));
    times.push(performance.now() - t0);
  }
  return median(times);
}

const floor = await bareTimers(21);
const wide = await measure(100, 20, 21);
const m100 = median(wide);
console.log('parallel fan-out, drones answered after a fixed delay (median of 21 runs)');
console.log(
  `100 branches × 20 ms: ${m100.toFixed(2)} ms (ideal 20 ms, overhead ${(m100 - 20).toFixed(2)} ms; min ${Math.min(...wide).toFixed(2)}, max ${Math.max(...wide).toFixed(2)})`,
);
console.log(
  `  (100 bare setTimeout(20) together: ${floor.toFixed(2)} ms; fan-out above that: ${(m100 - floor).toFixed(2)} ms)`,
);
for (const n of [1000, 10_000]) {
  const flat = median(await measure(n, 0, n >= 10_000 ? 7 : 21));
  console.log(
    `${n} branches × 0 ms: ${flat.toFixed(2)} ms (${((flat * 1000) / n).toFixed(2)} µs per branch)`,
  );
}
console.log(`target ≤ 22 ms for 100 × 20 ms: ${m100 <= 22 ? 'met' : 'NOT met'} (${m100.toFixed(2)} ms)`);
