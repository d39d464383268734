// Runtime overhead per node: chains of N trivial drones answered by the scripted provider (no I/O),
// so the time measured is the runtime's own work: walk, templates, events, routing, provider dispatch.
// Usage: node --import tsx bench/runtime-overhead.ts

import type { Hatchery } from '../src/engine/contracts.js';
import { loadHatcheryObject } from '../src/loader/load.js';
import { ScriptedProvider } from '../src/providers/scripted.js';
import { Runtime } from '../src/runtime/runtime.js';
import { median } from './lib/stats.js';

function chain(n: number): Hatchery {
  const nodes = Array.from({ length: n }, (_, i) => ({
    name: `N${i}`,
    usr_prompt: i === 0 ? '{{ ctx.input }}' : `Continue from {{ out.N${i - 1} }}`,
    ...(i < n - 1 ? { next: `N${i + 1}` } : {}),
  }));
  const res = loadHatcheryObject(
    { name: `chain_${n}`, desc: 'bench', max_steps: n + 1, nodes },
    '/tmp/bench.json',
  );
  if (!res.ok) throw res.error;
  return res.hatchery;
}

async function measure(n: number, runs: number, withEvents: boolean): Promise<number> {
  const model = new ScriptedProvider(() => 'ok');
  const runtime = new Runtime({ providers: { openai: model }, env: {} });
  const h = chain(n);
  const onEvent = withEvents ? () => {} : undefined;
  for (let i = 0; i < 3; i++) await runtime.run(h, { input: 'go', onEvent });
  const perNode: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await runtime.run(h, { input: 'go', onEvent });
    perNode.push(((performance.now() - t0) * 1000) / n);
  }
  return median(perNode);
}

const sizes = [10, 100, 1000, 5000];
console.log('runtime overhead per node (median µs/node, scripted provider, templates rendered each node)');
console.log('nodes\tno listener\twith listener');
const results: Record<number, number> = {};
for (const n of sizes) {
  const runs = n >= 5000 ? 7 : 15;
  const quiet = await measure(n, runs, false);
  const loud = await measure(n, runs, true);
  results[n] = quiet;
  console.log(`${n}\t${quiet.toFixed(2)}\t\t${loud.toFixed(2)}`);
}
console.log(
  `linearity: per-node cost at 5000 nodes / at 100 nodes = ${(results[5000]! / results[100]!).toFixed(2)} (1.0 = linear)`,
);
console.log(
  `target ≤ 10 µs/node at 1000 nodes: ${results[1000]! <= 10 ? 'met' : 'NOT met'} (${results[1000]!.toFixed(2)} µs)`,
);
