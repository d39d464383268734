// What pruning a busy server's state folder costs. A served call makes a run file; the store keeps the
// newest 1,000 finished runs and prunes the rest, every ten minutes (about 270,000 files at 450 calls
// a second before the sixth session) or, since then, once the folder holds 5,000 files more than it keeps.
// Issue 15 wants no work that grows faster than what it does: the CPU per deleted run should stay the
// same from a small excess to a large one, and the prune should not hold up the calls being served.
// Baseline: the same prune of an older build (`--base DIST`), in the same rounds.
//
// Method: one child process per build, folder size and round (fresh module state), alternating builds;
// each fills a fresh state folder with N finished one-drone run files (as a served call leaves them,
// oldest first), then times `store.prune()` down to the 1,000 kept: the process's CPU (user + system)
// per deleted run and per file in the folder, and the longest time the event loop did not turn meanwhile (a served call waits
// that long). Medians of rounds.
//
// Usage: npm run build && node --import tsx bench/prune.ts [--rounds R] [--base DIST]...
// (the folders go to the temp folder: TMPDIR=DIR puts them elsewhere)
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { option } from './lib/args.js';
import { buildsToTime, childRounds } from './lib/builds.js';
import { median } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;
const smoke = process.env.BENCH_SMOKE === '1';
const KEEP = 1_000;

if (process.argv.includes('--child')) {
  // --child DIST FILES: prints the CPU µs per deleted run and the longest stall in ms.
  const [dist, files] = process.argv.slice(process.argv.indexOf('--child') + 1);
  console.log(JSON.stringify(await child(dist!, Number(files))));
  process.exit(0);
} else {
  main();
}

/** The lines a served one-drone call leaves (ids and times filled in per run). */
function runText(id: string, at: number): string {
  const usage = { inputTokens: 24, outputTokens: 3, costUsd: 0.0000054 };
  const lines = [
    {
      v: 1,
      at,
      type: 'run_start',
      id,
      hatchery: 'ask',
      file: '/srv/hatchery/ask.json',
      hash: '0aa39cd62d4703ef',
      nodes: { Ask: 'a768ae6b9bad5992' },
      source: 'mcp',
      startedAt: at,
      owner: { pid: 1, host: 'bench', since: at - 60_000 },
      input: 'hello',
      vars: {},
    },
    { v: 1, at, type: 'node_start', node: 'Ask', kind: 'drone', step: 1, depth: 0 },
    {
      v: 1,
      at: at + 100,
      type: 'model_call',
      node: 'Ask',
      depth: 0,
      vendor: 'openai',
      model: 'gpt-4o-mini',
      key: '7129e68cc152b961',
      step: 1,
      system: 'You are a helpful assistant.',
      messages: [{ role: 'user', content: 'hello' }],
      text: 'echo: hello',
      toolCalls: [],
      stopReason: 'stop',
      usage,
      ms: 100,
    },
    {
      v: 1,
      at: at + 100,
      type: 'node_end',
      node: 'Ask',
      step: 1,
      depth: 0,
      output: 'echo: hello',
      usage,
      ms: 101,
    },
    {
      v: 1,
      at: at + 101,
      type: 'run_end',
      status: 'succeeded',
      output: 'echo: hello',
      usage,
      steps: 1,
      ms: 102,
    },
  ];
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

async function child(
  dist: string,
  files: number,
): Promise<{ perRun: number; perFile: number; stallMs: number }> {
  const { FileRunStore } = await import(`${dist}/journal/file-store.js`).catch(
    // A build from before the journal had its own layer.
    () => import(`${dist}/runtime/journal/file-store.js`),
  );
  const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-prune-'));
  try {
    const state = path.join(dir, 'runs');
    mkdirSync(state);
    const t0 = Date.now() / 1000 - files;
    for (let i = 0; i < files; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const file = path.join(state, `${id}.jsonl`);
      writeFileSync(file, runText(id, Math.round((t0 + i) * 1000)));
      utimesSync(file, t0 + i, t0 + i);
    }
    const store = new FileRunStore(state, { env: {}, maxRuns: KEEP });
    // The longest gap between two turns of the event loop while the prune goes on.
    let stall = 0;
    let last = performance.now();
    let going = true;
    const turn = () => {
      const now = performance.now();
      stall = Math.max(stall, now - last);
      last = now;
      if (going) setImmediate(turn);
    };
    setImmediate(turn);
    const c0 = process.cpuUsage();
    const deleted: number = await store.prune();
    const used = process.cpuUsage(c0);
    going = false;
    if (deleted !== files - KEEP || readdirSync(state).length !== KEEP) {
      throw new Error(`the prune deleted ${deleted} runs and left ${readdirSync(state).length}`);
    }
    return {
      perRun: (used.user + used.system) / deleted,
      perFile: (used.user + used.system) / files,
      stallMs: stall,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(): void {
  const rounds = Number(option('--rounds') ?? (smoke ? 1 : 3));
  const sizes = smoke ? [1_200, 2_000] : [2_000, 20_000];
  const builds = buildsToTime().filter((b) => b.dist !== undefined);
  if (builds.length === 0) throw new Error('no dist/ to time: run `npm run build` first');
  const results = childRounds<{ perRun: number; perFile: number; stallMs: number }>(
    path.join(root, 'bench/prune.ts'),
    builds,
    sizes,
    rounds,
  );
  console.log(
    `pruning a state folder of finished one-drone runs down to the ${KEEP.toLocaleString('en')} kept (median of ${rounds} rounds): CPU (user + system) per deleted run, and the longest the event loop did not turn`,
  );
  for (const b of builds) {
    const cells = sizes.map((n) => {
      const r = results(b, n);
      const per = median(r.map((x) => x.perRun));
      const stall = median(r.map((x) => x.stallMs));
      return `${n.toLocaleString('en')} files ${per.toFixed(0)} µs/run, stall ${stall.toFixed(1)} ms`;
    });
    console.log(`  ${b.label.padEnd(36)} ${cells.join('; ')}`);
  }
  for (const b of builds) {
    const at = (n: number) => median(results(b, n).map((x) => x.perFile));
    const ratio = at(sizes[sizes.length - 1]!) / at(sizes[0]!);
    console.log(
      `  ${b.label}: CPU per file in the folder, ${sizes[sizes.length - 1]!.toLocaleString('en')} files ÷ ${sizes[0]!.toLocaleString('en')}: ${ratio.toFixed(2)}x   (target <= 1.5x, linear in the folder: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
    );
  }
}
