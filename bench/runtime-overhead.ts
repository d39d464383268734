// Runtime overhead per node: chains of N trivial drones answered by the scripted provider (no I/O),
// so the time measured is the runtime's own work: walk, templates, events, routing, provider dispatch.
// Issue 15's targets: ≤ 1 µs per node at 1,000 nodes, within 1.5× of that at 100,000 (journal off),
// ≤ 2 µs per node with the run journal on. The 100,000-node chain runs with the journal off and fewer
// rounds (loading it takes a while). Baseline: the same script on the start commit (e98caa6).
// Usage: node --import tsx bench/runtime-overhead.ts   (BENCH_SMOKE=1: 10 and 100 nodes, 2 rounds)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Hatchery } from '../src/engine/contracts.js';
import { loadHatcheryObject } from '../src/loader/load.js';
import { ScriptedProvider } from '../src/providers/scripted.js';
import { FileRunStore } from '../src/runtime/journal/file-store.js';
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

type Mode = 'quiet' | 'listener' | 'journal';
const MODES: readonly Mode[] = ['quiet', 'listener', 'journal'];

/** One runtime per mode; `state` is the journal's temp folder. */
function setup(mode: Mode) {
  const model = new ScriptedProvider(() => 'ok', { record: false });
  const state = mode === 'journal' ? mkdtempSync(path.join(tmpdir(), 'hatchery-bench-state-')) : undefined;
  const store = state ? new FileRunStore(state, { env: {} }) : undefined;
  const runtime = new Runtime({ providers: { openai: model }, env: {}, store });
  const onEvent = mode === 'listener' ? () => {} : undefined;
  return { runtime, store, state, onEvent };
}

/**
 * Median µs/node of each mode's run, and (journal) of the run plus the wait until its journal is on
 * disk. The modes take turns in every round, so a noisy neighbour slows them alike.
 */
async function measure(n: number, runs: number): Promise<Record<Mode, { run: number; written: number }>> {
  const h = chain(n);
  const setups = MODES.map(setup);
  const perNode = MODES.map(() => [] as number[]);
  const written = MODES.map(() => [] as number[]);
  for (let i = -3; i < runs; i++) {
    for (let m = 0; m < MODES.length; m++) {
      const { runtime, store, onEvent } = setups[m]!;
      const t0 = performance.now();
      await runtime.run(h, { input: 'go', onEvent });
      const t1 = performance.now();
      await store?.idle();
      const t2 = performance.now();
      if (i < 0) continue;
      perNode[m]!.push(((t1 - t0) * 1000) / n);
      written[m]!.push(((t2 - t0) * 1000) / n);
    }
  }
  for (const { runtime, state } of setups) {
    await runtime.close();
    if (state) rmSync(state, { recursive: true, force: true });
  }
  const out = {} as Record<Mode, { run: number; written: number }>;
  MODES.forEach((mode, m) => {
    out[mode] = { run: median(perNode[m]!), written: median(written[m]!) };
  });
  return out;
}

const smoke = process.env.BENCH_SMOKE === '1';
const sizes = smoke ? [10, 100] : [10, 100, 1000, 5000];
const big = smoke ? 1000 : 100_000;
const small = smoke ? 100 : 1000;
const mid = smoke ? 100 : 5000;
console.log('runtime overhead per node (median µs/node, scripted provider, templates rendered each node)');
console.log(
  'journal on: a FileRunStore in a temp folder; "written" includes the wait until the journal is on disk',
);
console.log('nodes\tno listener\twith listener\tjournal on\tjournal written');
const results: Record<number, number> = {};
const journal: Record<number, { run: number; written: number }> = {};
for (const n of sizes) {
  const runs = smoke ? 2 : n >= 5000 ? 7 : 15;
  const all = await measure(n, runs);
  const quiet = all.quiet.run;
  const loud = all.listener.run;
  const j = all.journal;
  results[n] = quiet;
  journal[n] = j;
  console.log(
    `${n}\t${quiet.toFixed(2)}\t\t${loud.toFixed(2)}\t\t${j.run.toFixed(2)}\t\t${j.written.toFixed(2)}`,
  );
}

/** Journal off only: `small` and `big` nodes taking turns, so both see the same machine. */
async function flat(runs: number): Promise<{ small: number; big: number }> {
  const hs = [chain(small), chain(big)];
  const { runtime } = setup('quiet');
  const per = [[] as number[], [] as number[]];
  for (let i = -1; i < runs; i++) {
    for (let k = 0; k < 2; k++) {
      const n = k === 0 ? small : big;
      // The small chain runs as many nodes as the big one per round, in several runs.
      const reps = Math.max(1, Math.round(big / n / 10));
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) await runtime.run(hs[k]!, { input: 'go' });
      if (i >= 0) per[k]!.push(((performance.now() - t0) * 1000) / (n * reps));
    }
  }
  await runtime.close();
  return { small: median(per[0]!), big: median(per[1]!) };
}
const t0 = performance.now();
const wide = await flat(smoke ? 2 : 5);
console.log(
  `${big} nodes, journal off: ${wide.big.toFixed(2)} µs/node; ${small} nodes in the same rounds: ${wide.small.toFixed(2)} µs/node (${((performance.now() - t0) / 1000).toFixed(0)} s with loading)`,
);
console.log(
  `linearity: per-node cost at ${mid} nodes / at 100 nodes = ${(results[mid]! / results[100]!).toFixed(2)} (1.0 = linear)`,
);
const ratio = wide.big / wide.small;
console.log(
  `target per-node cost flat, ${big} vs ${small} nodes ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}×)`,
);
console.log(
  `target ≤ 1 µs/node at ${small} nodes, journal off: ${results[small]! <= 1 ? 'met' : 'NOT met'} (${results[small]!.toFixed(2)} µs)`,
);
const jSmall = journal[small]!;
console.log(
  `target ≤ 2 µs/node at ${small} nodes, journal on: ${jSmall.run <= 2 ? 'met' : 'NOT met'} (${jSmall.run.toFixed(2)} µs until the run returns; ${jSmall.written.toFixed(2)} µs until the journal is on disk)`,
);
console.log(
  `journal at ${small} nodes: ${results[small]!.toFixed(2)} µs/node without, ${jSmall.run.toFixed(2)} µs/node with (ratio ${(jSmall.run / results[small]!).toFixed(2)}); fully written after ${jSmall.written.toFixed(2)} µs/node`,
);
const runOverhead = jSmall.run - results[small]!;
const writtenOverhead = jSmall.written - results[small]!;
console.log(
  `target ≤ 2 µs/node of journal overhead at ${small} nodes, until the run returns: ${runOverhead <= 2 ? 'met' : 'NOT met'} (${runOverhead.toFixed(2)} µs)`,
);
// The serialization, hashing and write happen after the nodes (or at each turn the walk gives the
// loop), so they do not hold a node up; they still cost CPU, and this says how much.
console.log(
  `until the journal is on disk: ${writtenOverhead.toFixed(2)} µs/node more than without it (${writtenOverhead <= 2 ? 'within' : 'NOT within'} 2 µs)`,
);
