// What a run store's poll for cancel markers costs while runs are in flight, as the state folder fills.
// A `runs cancel` from another process leaves a `<id>.cancel` marker in the state folder; the server
// that owns the run looks for markers every poll (500 ms by default). The folder keeps every run
// until the next prune (at most one per ten minutes), so a busy server's folder holds many thousands
// of files: a poll that lists the whole folder costs more per call the longer the server runs.
// Issue 15 wants no path that grows like that: the poll's CPU with 50 runs in flight should stay the
// same from 1,000 to 50,000 files in the folder (target: at most 2x). Baseline: the same poll of an
// older build (`--base DIST`), measured in the same rounds.
//
// Method: one child process per build, folder size and round (fresh module state), alternating
// builds; each fills a fresh state folder with N files that are no runs (only entries of the folder),
// starts M one-drone runs whose model never answers within the measurement, lets the store poll
// once, then reads the process's CPU time (user + system) over a window of polls. Medians of rounds.
//
// Usage: npm run build && node --import tsx bench/cancel-poll.ts [--rounds R] [--runs M] [--base DIST]...
// (the folders go to the temp folder: TMPDIR=DIR puts them elsewhere)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { option } from './lib/args.js';
import { type Build, buildsToTime, childRounds } from './lib/builds.js';
import { median } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;
const smoke = process.env.BENCH_SMOKE === '1';
const POLL_MS = 50;

if (process.argv.includes('--child')) {
  // --child DIST FILES RUNS WINDOW_MS: prints the CPU µs per poll.
  const [dist, files, runs, windowMs] = process.argv.slice(process.argv.indexOf('--child') + 1);
  console.log(JSON.stringify(await child(dist!, Number(files), Number(runs), Number(windowMs))));
  process.exit(0);
} else {
  main();
}

async function child(
  dist: string,
  files: number,
  runs: number,
  windowMs: number,
): Promise<{ perPoll: number }> {
  const { FileRunStore } = await import(`${dist}/journal/file-store.js`).catch(
    // A build from before the journal had its own layer.
    () => import(`${dist}/runtime/journal/file-store.js`),
  );
  const { Runtime } = await import(`${dist}/runtime/runtime.js`);
  const { ScriptedProvider } = await import(`${dist}/providers/scripted.js`);
  const { loadHatcheryObject } = await import(`${dist}/loader/load.js`);
  const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-poll-'));
  try {
    const state = path.join(dir, 'runs');
    mkdirSync(state);
    for (let i = 0; i < files; i++) writeFileSync(path.join(state, `other-${i}.txt`), '');
    const store = new FileRunStore(state, { env: {}, pollMs: POLL_MS });
    const model = new ScriptedProvider(() => 'late', { delayMs: 600_000 });
    const runtime = new Runtime({ providers: { openai: model }, env: {}, store, cwd: dir });
    const h = loadHatcheryObject(
      { name: 'poll', desc: 'one drone', model: 'openai:gpt-test', nodes: [{ name: 'A', usr_prompt: 'x' }] },
      path.join(dir, 'poll.json'),
    ).hatchery;
    // A signal per run, as each served call has its own.
    const stops = Array.from({ length: runs }, () => new AbortController());
    const done = stops.map((c) => runtime.run(h, { signal: c.signal }).catch(() => {}));
    // A few polls first: the runs' files are written and the store has looked at the folder once.
    await new Promise((r) => setTimeout(r, POLL_MS * 4));
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, windowMs));
    const used = process.cpuUsage(c0);
    const polls = (performance.now() - t0) / POLL_MS;
    for (const c of stops) c.abort();
    await Promise.all(done);
    await runtime.close();
    return { perPoll: (used.user + used.system) / polls };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(): void {
  const rounds = Number(option('--rounds') ?? (smoke ? 1 : 3));
  const runs = Number(option('--runs') ?? 50);
  const sizes = smoke ? [200, 2_000] : [1_000, 10_000, 50_000];
  const windowMs = smoke ? 300 : 2_000;
  const builds = buildsToTime().filter((b) => b.dist !== undefined);
  if (builds.length === 0) throw new Error('no dist/ to time: run `npm run build` first');
  const results = childRounds<{ perPoll: number }>(
    path.join(root, 'bench/cancel-poll.ts'),
    builds,
    sizes,
    rounds,
    [String(runs), String(windowMs)],
  );
  const perPoll = (b: Build, n: number) => results(b, n).map((r) => r.perPoll);
  console.log(
    `a run store's poll for cancel markers (every ${POLL_MS} ms here, 500 ms by default) with ${runs} runs in flight: CPU per poll (user + system, median of ${rounds} rounds), by files in the state folder`,
  );
  for (const b of builds) {
    const cells = sizes.map((n) => `${n.toLocaleString('en')} files ${median(perPoll(b, n)).toFixed(0)} µs`);
    console.log(`  ${b.label.padEnd(36)} ${cells.join(', ')}`);
  }
  for (const b of builds) {
    const first = median(perPoll(b, sizes[0]!));
    const last = median(perPoll(b, sizes[sizes.length - 1]!));
    const ratio = last / first;
    console.log(
      `  ${b.label}: ${sizes[sizes.length - 1]!.toLocaleString('en')} files ÷ ${sizes[0]!.toLocaleString('en')}: ${ratio.toFixed(2)}x   (target <= 2x, the poll does not grow with the folder: ${ratio <= 2 ? 'met' : 'NOT met'})`,
    );
  }
}
