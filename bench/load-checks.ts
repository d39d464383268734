// Load time per node of a file: parse, validate, compile and the load-time checks (templates against
// the graph, tool arguments, paths). Chains where every node reads the previous output and an input,
// the shape that gives the template analysis the most to do.
// Usage: node --import tsx bench/load-checks.ts

import { loadHatcheryText } from '../src/loader/load.js';
import { median } from './lib/stats.js';

// BENCH_SMOKE=1 (CI's smoke step): the smallest size, two runs, every code path still taken.
const smoke = process.env.BENCH_SMOKE === '1';

function chainText(n: number): string {
  const nodes = Array.from({ length: n }, (_, i) => ({
    name: `N${i}`,
    usr_prompt: i === 0 ? '{{ ctx.input }}' : `Continue from {{ out.N${i - 1} }} about {{ ctx.topic }}`,
    save_output: `v${i}`,
    ...(i < n - 1 ? { next: `N${i + 1}` } : {}),
  }));
  return JSON.stringify({
    name: `chain_${n}`,
    desc: 'bench',
    inputs: { topic: 't' },
    max_steps: n + 1,
    nodes,
  });
}

function measure(n: number, runs: number): number {
  const text = chainText(n);
  for (let i = 0; i < 2; i++) loadHatcheryText(text, '/tmp/bench.json');
  const perNode: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = loadHatcheryText(text, '/tmp/bench.json');
    const ms = performance.now() - t0;
    if (!res.ok) throw res.error;
    perNode.push((ms * 1000) / n);
  }
  return median(perNode);
}

console.log('load (parse + validate + compile + checks), median µs per node');
const sizes: readonly (readonly [number, number])[] = smoke
  ? [[100, 2]]
  : [
      [100, 30],
      [1000, 15],
      [5000, 5],
    ];
for (const [n, runs] of sizes) {
  const us = measure(n, runs);
  console.log(
    `  ${String(n).padStart(5)} nodes: ${us.toFixed(1)} µs/node (${((us * n) / 1000).toFixed(1)} ms per load)`,
  );
}
