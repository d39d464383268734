// The run journal's own work: what a LineJournal spends turning a run's events into JSON lines and
// writing them (serialisation, the cassette key of every model call, redaction checks, the append),
// in CPU time. Measured on the events of real runs, recorded once per round and fed to a journal of
// each tree: a chain of 1,000 drones (µs per node; issue 15 wants a journaled chain at ≤ 2 µs per node
// in all, see runtime-overhead.ts for the run itself) and tool loops of 50 to 400 turns (µs per turn:
// a loop sends its whole conversation every turn, and the journal's work per turn must not grow
// with it). Before/after: `--base DIR` (a checkout of an earlier commit, e.g. /work/wt/base) runs its
// source interleaved with this one. The files go to the temp folder (TMPDIR=DIR to change it); each
// is created before its run's events are timed.
// Usage: node --import tsx bench/journal-cost.ts [--base DIR] [--rounds R]   (BENCH_SMOKE=1: small sizes, 2 rounds)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median } from './lib/stats.js';

const smoke = process.env.BENCH_SMOKE === '1';
function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const ROUNDS = Number(option('--rounds') ?? (smoke ? 2 : 15));
const CHAIN = smoke ? 50 : 1000;
const TURNS = smoke ? [5, 20] : [50, 200, 400];
const root = new URL('..', import.meta.url).pathname;
const base = option('--base');

type Event = { type: string };
interface Journal {
  listener: (e: Event) => void;
  flush(): Promise<void>;
  end(status: string, fields: Record<string, unknown>): Promise<void>;
}

/** One source tree: a run of each workload (events recorded) and a fresh journal to feed them to. */
async function setup(dir: string) {
  const src = (p: string) => import(path.join(dir, 'src', p));
  const { loadHatcheryObject } = await src('loader/load.ts');
  const { ScriptedProvider } = await src('providers/scripted.ts');
  const { Runtime } = await src('runtime/runtime.ts');
  // A tree from before the journal had sinks calls it FileJournal, in file-journal.ts (under runtime/
  // before the journal had its own layer), and takes the file's path.
  const lineJournal = await src('journal/line-journal.ts').catch(() => undefined);
  const journalModule =
    lineJournal ?? (await src('journal/file-journal.ts').catch(() => src('runtime/journal/file-journal.ts')));
  const JournalClass = lineJournal ? lineJournal.LineJournal : journalModule.FileJournal;
  const JournalFile = lineJournal ? (await src('journal/journal-file.ts')).JournalFile : undefined;
  const firstRecord = () =>
    journalModule.Extra
      ? new journalModule.Extra('run_start', { id: 'bench' })
      : JournalClass.record('run_start', { id: 'bench' });
  const load = (def: unknown) => {
    const res = loadHatcheryObject(def, '/tmp/bench-journal-cost.json');
    if (!res.ok) throw res.error;
    return res.hatchery;
  };
  const chain = load({
    name: 'chain',
    desc: 'bench',
    max_steps: CHAIN + 1,
    nodes: Array.from({ length: CHAIN }, (_, i) => ({
      name: `N${i}`,
      usr_prompt: i === 0 ? '{{ ctx.input }}' : `Continue from {{ out.N${i - 1} }}`,
      ...(i < CHAIN - 1 ? { next: `N${i + 1}` } : {}),
    })),
  });
  const loops = new Map(
    TURNS.map((t) => [
      t,
      load({
        name: 'loop',
        desc: 'bench',
        nodes: [{ name: 'L', usr_prompt: '{{ ctx.input }}', tools: ['echo'], max_turns: t + 2 }],
      }),
    ]),
  );
  // A tool call per turn until the conversation holds `turns` calls, then an answer.
  let turns = 0;
  const model = new ScriptedProvider(
    (req: { messages: unknown[] }) =>
      req.messages.length < 2 * turns
        ? {
            text: '',
            toolCalls: [{ name: 'echo', args: { text: `turn ${req.messages.length} ${'x'.repeat(80)}` } }],
          }
        : 'done',
    { record: false },
  );
  const runtime = new Runtime({ providers: { openai: model }, env: {} });
  const folder = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-journal-'));
  let files = 0;
  /** The journal's CPU time in µs for the events of one run of `h`. */
  const journalCpu = async (h: unknown, loopTurns = 0): Promise<number> => {
    turns = loopTurns;
    const events: Event[] = [];
    await runtime.run(h, { input: 'go', onEvent: (e: Event) => events.push(e) });
    // The file is created (and the run's first record written) before the clock starts: creating a
    // file costs what the file system makes it cost (see bench/lib/file-cost.ts), once per run.
    const file = path.join(folder, `${files++}.jsonl`);
    const target = JournalFile ? (failed: unknown) => new JournalFile(file, failed) : file;
    const j = new JournalClass(target, 'bench', {
      secrets: [],
      onEnd: () => {},
      first: firstRecord(),
    }) as Journal;
    await j.flush();
    const c0 = process.cpuUsage();
    for (const e of events) j.listener(e);
    await j.flush();
    const c = process.cpuUsage(c0);
    await j.end('succeeded', {});
    return c.user + c.system;
  };
  return {
    chain: async () => (await journalCpu(chain)) / CHAIN,
    loop: async (t: number) => (await journalCpu(loops.get(t), t)) / t,
    close: async () => {
      await runtime.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const sides = [{ name: 'this tree', s: await setup(root) }];
if (base) sides.push({ name: `base (${base})`, s: await setup(path.resolve(base)) });
const chainUs = sides.map(() => [] as number[]);
const loopUs = sides.map(() => new Map(TURNS.map((t) => [t, [] as number[]])));
for (let round = -2; round < ROUNDS; round++) {
  // Alternate which side goes first, so drift hits both alike.
  const order = round % 2 ? [...sides.keys()].reverse() : [...sides.keys()];
  for (const k of order) {
    const c = await sides[k]!.s.chain();
    if (round >= 0) chainUs[k]!.push(c);
    for (const t of TURNS) {
      const l = await sides[k]!.s.loop(t);
      if (round >= 0) loopUs[k]!.get(t)!.push(l);
    }
  }
}
for (const { s } of sides) await s.close();

const f = (x: number) => x.toFixed(2);
console.log(
  `the journal's own CPU (listener, serialisation, keys, redaction, write), median of ${ROUNDS} rounds`,
);
console.log(`  chain of ${CHAIN} drones, µs per node:`);
for (const [k, { name }] of sides.entries()) console.log(`    ${name.padEnd(40)} ${f(median(chainUs[k]!))}`);
console.log(`  tool loop, µs per turn at ${TURNS.join(' / ')} turns:`);
for (const [k, { name }] of sides.entries())
  console.log(`    ${name.padEnd(40)} ${TURNS.map((t) => f(median(loopUs[k]!.get(t)!))).join(' / ')}`);
const first = TURNS[0]!;
const last = TURNS[TURNS.length - 1]!;
const growth = median(loopUs[0]!.get(last)!) / median(loopUs[0]!.get(first)!);
console.log(
  `  work per turn at ${last} turns / at ${first} turns: ${growth.toFixed(2)}x   (no quadratic path: <= 1.5x: ${growth <= 1.5 ? 'met' : 'NOT met'})`,
);
if (base) {
  const r = median(chainUs[0]!) / median(chainUs[1]!);
  const l = median(loopUs[0]!.get(last)!) / median(loopUs[1]!.get(last)!);
  console.log(`  this tree / base: chain ${r.toFixed(2)}x, ${last}-turn loop ${l.toFixed(2)}x`);
} else console.log('  (pass --base DIR, a checkout of an earlier commit, for a before/after ratio)');
