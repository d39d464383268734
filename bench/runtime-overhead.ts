// Runtime overhead per node: chains of N trivial drones answered by the scripted provider (no I/O),
// so the time measured is the runtime's own work: walk, templates, events, routing, provider dispatch.
// Usage: node --import tsx bench/runtime-overhead.ts

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

const sizes = [10, 100, 1000, 5000];
console.log('runtime overhead per node (median µs/node, scripted provider, templates rendered each node)');
console.log(
  'journal on: a FileRunStore in a temp folder; "written" includes the wait until the journal is on disk',
);
console.log('nodes\tno listener\twith listener\tjournal on\tjournal written');
const results: Record<number, number> = {};
const journal: Record<number, { run: number; written: number }> = {};
for (const n of sizes) {
  const runs = n >= 5000 ? 7 : 15;
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
console.log(
  `linearity: per-node cost at 5000 nodes / at 100 nodes = ${(results[5000]! / results[100]!).toFixed(2)} (1.0 = linear)`,
);
console.log(
  `target ≤ 10 µs/node at 1000 nodes: ${results[1000]! <= 10 ? 'met' : 'NOT met'} (${results[1000]!.toFixed(2)} µs)`,
);
const j1000 = journal[1000]!;
console.log(
  `journal at 1000 nodes: ${results[1000]!.toFixed(2)} µs/node without, ${j1000.run.toFixed(2)} µs/node with (ratio ${(j1000.run / results[1000]!).toFixed(2)}); fully written after ${j1000.written.toFixed(2)} µs/node`,
);
const runOverhead = j1000.run - results[1000]!;
const writtenOverhead = j1000.written - results[1000]!;
console.log(
  `target ≤ 2 µs/node of journal overhead at 1000 nodes, until the run returns: ${runOverhead <= 2 ? 'met' : 'NOT met'} (${runOverhead.toFixed(2)} µs)`,
);
// The serialization, hashing and write happen after the nodes (or at each turn the walk gives the
// loop), so they do not hold a node up; they still cost CPU, and this says how much.
console.log(
  `until the journal is on disk: ${writtenOverhead.toFixed(2)} µs/node more than without it (${writtenOverhead <= 2 ? 'within' : 'NOT within'} 2 µs)`,
);
