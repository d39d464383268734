// Time to resume a 1,000-node chain from its journal: every node finished but the last, which failed.
// The resume reads the journal, reloads and hashes the file, builds the memo, serves 999 nodes from it
// and runs the last one (scripted provider, no I/O besides the journal itself).
// Usage: node --import tsx bench/resume.ts

import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileRunStore } from '../src/journal/file-store.js';
import { ScriptedProvider } from '../src/providers/scripted.js';
import { Runtime } from '../src/runtime/runtime.js';
import { median } from './lib/stats.js';

// BENCH_SMOKE=1 (CI's smoke step): a 50-node chain resumed twice, every code path still taken.
const smoke = process.env.BENCH_SMOKE === '1';
const N = smoke ? 50 : 1000;
const RUNS = smoke ? 2 : 15;
const WARMUP = smoke ? 1 : 3;

const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-resume-'));
const file = path.join(dir, 'chain.json');
const nodes = Array.from({ length: N }, (_, i) => ({
  name: `N${i}`,
  model: 'openai:bench',
  usr_prompt: i === 0 ? '{{ ctx.input }}' : `N${i} continues from {{ out.N${i - 1} }}`,
  ...(i < N - 1 ? { next: `N${i + 1}` } : {}),
}));
writeFileSync(file, JSON.stringify({ name: 'chain', desc: 'bench', max_steps: N + 1, nodes }));

const state = path.join(dir, 'state');
// The first run fails at the last node; later attempts answer it.
let failLast = true;
const model = new ScriptedProvider({
  record: false,
  reply: (req) =>
    failLast && JSON.stringify(req.messages).includes(`N${N - 1} continues`)
      ? new Error('the last node fails')
      : 'ok',
});
const runtimeWith = () =>
  new Runtime({ providers: { openai: model }, env: {}, store: new FileRunStore(state) });

const first = runtimeWith();
const h = await first.load(file);
try {
  await first.run(h, { input: 'go' });
} catch {
  // Expected: the last node fails.
}
await first.close();
const journalFile = readdirSync(state).find((f) => f.endsWith('.jsonl'))!;
const id = journalFile.replace(/\.jsonl$/, '');
const saved = path.join(dir, 'failed.jsonl');
copyFileSync(path.join(state, journalFile), saved);
failLast = false;

/** Median ms of resuming the failed run; `warm`: the file is loaded before the clock starts. */
async function measure(warm: boolean): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS + WARMUP; i++) {
    // Every resume starts from the same failed journal (a resume appends to it).
    copyFileSync(saved, path.join(state, journalFile));
    const runtime = runtimeWith();
    if (warm) await runtime.load(file);
    const t0 = performance.now();
    const result = await runtime.resume(id);
    const ms = performance.now() - t0;
    await runtime.close();
    if (result.steps !== N) throw new Error(`resume ran ${result.steps} steps, expected ${N}`);
    if (i >= WARMUP) times.push(ms);
  }
  return median(times);
}

const cold = await measure(false);
const warm = await measure(true);
rmSync(dir, { recursive: true, force: true });
console.log(
  `resume of a ${N}-node chain from its journal (all finished but the last, which failed), ${RUNS} runs`,
);
console.log(
  `median ${cold.toFixed(2)} ms (${((cold * 1000) / N).toFixed(2)} µs per node), loading the file included`,
);
console.log(
  `median ${warm.toFixed(2)} ms (${((warm * 1000) / N).toFixed(2)} µs per node), file already loaded: read the journal, hash, memo, walk`,
);
