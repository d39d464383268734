// What the run journal costs a served call, without the server: 1,000 one-drone runs started at once
// (as a burst of MCP calls starts them, each with its own signal) whose model answers after 50 ms, in
// one process, with the journal off, with a listener that does nothing (the run's events alone), and
// with the journal on (a FileRunStore: files created, lines built, written, closed). Per run: CPU
// (user + system, and the kernel's part) and memory allocated. Over stdio (concurrent-calls.ts) the
// same difference is a few percent of a call and lost in the machine's noise; here it is most of
// what is measured, and allocation hardly moves with the load. Baseline: another build in the same
// rounds (`--base DIST`, e.g. /work/wt/base/dist).
//
// Method: one child process per build, mode and round (fresh module state), builds alternating; each
// runs 2 bursts of warm-up, then times 8 (the state folder grows as a server's does between prunes,
// which never come here). Medians of rounds.
//
// Usage: npm run build && node --import tsx bench/journal-burst.ts [--rounds R] [--base DIST]...
// (the state folders go to the temp folder: TMPDIR=/dev/shm measures the journal, not the disk)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { option } from './lib/args.js';
import { buildsToTime, childRounds } from './lib/builds.js';
import { median } from './lib/stats.js';

const smoke = process.env.BENCH_SMOKE === '1';
const MODES = ['journal off', 'a listener', 'journal on'] as const;

/** What one child measures, per run. */
interface Sample {
  cpu: number;
  system: number;
  /** The JavaScript thread's part of cpu (Linux; else all of it): what holds up a server's other calls. */
  main: number;
  kib: number;
}

if (process.argv.includes('--child')) {
  // --child DIST MODE BURST BURSTS
  const [dist, mode, burst, bursts] = process.argv.slice(process.argv.indexOf('--child') + 1);
  console.log(JSON.stringify(await child(dist!, Number(mode), Number(burst), Number(bursts))));
  process.exit(0);
} else {
  main();
}

async function child(dist: string, mode: number, n: number, bursts: number): Promise<Sample> {
  const { FileRunStore } = await import(`${dist}/journal/file-store.js`).catch(
    // A build from before the journal had its own layer.
    () => import(`${dist}/runtime/journal/file-store.js`),
  );
  const { Runtime } = await import(`${dist}/runtime/runtime.js`);
  const { ScriptedProvider } = await import(`${dist}/providers/scripted.js`);
  const { loadHatcheryObject } = await import(`${dist}/loader/load.js`);
  const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-burst-'));
  const model = new ScriptedProvider(
    (req: { messages: { content: string }[] }) => `echo: ${req.messages.at(-1)?.content}`,
    { record: false, delayMs: 50 },
  );
  // No prune during the measure: a server's folder grows like this between two.
  const store = mode === 2 ? new FileRunStore(dir, { env: {}, pruneEvery: 1e9 }) : undefined;
  const runtime = new Runtime({ providers: { openai: model }, env: {}, store, cwd: dir });
  const h = loadHatcheryObject(
    {
      name: 'ask_hatch',
      desc: 'one drone',
      model: 'openai:gpt-4o-mini',
      nodes: [{ name: 'Ask', usr_prompt: '{{ ctx.input }}' }],
    },
    path.join(dir, 'ask.json'),
  ).hatchery;
  const onEvent = mode === 1 ? () => {} : undefined;
  const burst = async () => {
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        // A signal per run, as each served call has its own.
        const r = await runtime.run(h, {
          input: `m${i}`,
          vars: {},
          source: 'mcp',
          signal: new AbortController().signal,
          onEvent,
        });
        if (r.output !== `echo: m${i}`) throw new Error(`wrong output ${r.output}`);
      }),
    );
    await store?.idle();
  };
  try {
    for (let i = 0; i < 2; i++) await burst();
    const gc = new GCProfiler();
    gc.start();
    const used = getHeapStatistics().used_heap_size;
    const c0 = process.cpuUsage();
    const m0 = mainThreadUs();
    for (let i = 0; i < bursts; i++) await burst();
    const c = process.cpuUsage(c0);
    const m = mainThreadUs() - m0;
    let freed = 0;
    for (const s of gc.stop()?.statistics ?? [])
      freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
    const runs = n * bursts;
    return {
      cpu: (c.user + c.system) / runs,
      system: c.system / runs,
      main: Number.isNaN(m) ? (c.user + c.system) / runs : m / runs,
      kib: (getHeapStatistics().used_heap_size + freed - used) / 1024 / runs,
    };
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU time of this process's JavaScript thread so far in µs, from /proc (Linux; NaN elsewhere). */
function mainThreadUs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 (12 and 13 after the name), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

function main(): void {
  const rounds = Number(option('--rounds') ?? (smoke ? 1 : 3));
  const burst = smoke ? 100 : 1000;
  const bursts = smoke ? 2 : 8;
  const builds = buildsToTime().filter((b) => b.dist !== undefined);
  if (builds.length === 0) {
    console.log('journal-burst: run `npm run build` first (it times dist/)');
    return;
  }
  const script = new URL(import.meta.url).pathname;
  const results = childRounds<Sample>(script, builds, [0, 1, 2], rounds, [String(burst), String(bursts)]);
  console.log(
    `${burst} one-drone runs at once (model answers after 50 ms), ${bursts} bursts per child; medians of ${rounds} rounds; per run:`,
  );
  for (const b of builds) {
    const of = (mode: number) => results(b, mode);
    const med = (mode: number, k: keyof Sample) => median(of(mode).map((s) => s[k]));
    console.log(`  ${b.label}`);
    MODES.forEach((name, mode) => {
      console.log(
        `    ${name.padEnd(12)} ${med(mode, 'cpu').toFixed(1).padStart(7)} µs CPU (kernel ${med(mode, 'system').toFixed(1)}, JavaScript thread ${med(mode, 'main').toFixed(1)})   ${med(mode, 'kib').toFixed(2)} KiB   (CPU per round: ${of(
          mode,
        )
          .map((s) => s.cpu.toFixed(0))
          .join(', ')})`,
      );
    });
    console.log(
      `    the journal: +${(med(2, 'cpu') - med(0, 'cpu')).toFixed(1)} µs CPU (JavaScript thread +${(med(2, 'main') - med(0, 'main')).toFixed(1)}), +${(med(2, 'kib') - med(0, 'kib')).toFixed(2)} KiB per run; the events alone: +${(med(1, 'cpu') - med(0, 'cpu')).toFixed(1)} µs, +${(med(1, 'kib') - med(0, 'kib')).toFixed(2)} KiB`,
    );
  }
}
