// Round trip of one tool call over stdio: a one-node baneling hatchery served by the built CLI
// versus a bare SDK v2 server with one echo tool (serveStdio), measured in the same run. Target: the
// hatchery call at most 1.1x the bare echo call, in both protocol eras (--era 2025, the default: an
// SDK v1 client with the initialize handshake; --era 2026: an SDK v2 client pinned to 2026-07-28).
//
// Method: on Linux the bench re-runs itself pinned to one CPU (taskset), client and servers alike:
// unpinned, where the scheduler happens to place the three processes decides the figures (ratios
// from 0.6x to 3x between runs on a 2-core machine). Then several rounds, each with a fresh pair of
// server processes, a long warm-up (the JIT must settle: the hatchery server runs more code than
// the bare one), and alternating blocks of sequential calls so that drift hits both alike.
// Usage: npm run build && node --import tsx bench/mcp-roundtrip.ts [--calls N] [--rounds R] [--era 2025|2026] [--no-journal] [--no-pin] [--strict] [--cli PATH]
// (`--cli /work/wt/base/dist/cli.js` measures another build, e.g. the one before a change.)
// The journal's state folder is in the bench's temp folder (TMPDIR=DIR puts it elsewhere): the bench
// prints what creating one run file costs there, since the journal creates one per call and on one
// pinned CPU that kernel time is part of every round trip (0.02-1 ms, see bench/lib/file-cost.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describeFileCost, runFileCost } from './lib/file-cost.js';
import { median, quantile } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;

const PINNED_ENV = 'HATCHERY_BENCH_CPU';
if (process.platform === 'linux' && !process.env[PINNED_ENV] && !process.argv.includes('--no-pin')) {
  const cpu = String(availableParallelism() - 1);
  const r = spawnSync(
    'taskset',
    ['-c', cpu, process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    {
      stdio: 'inherit',
      env: { ...process.env, [PINNED_ENV]: cpu },
    },
  );
  // No taskset: measure unpinned below.
  if (!r.error) process.exit(r.status ?? 1);
}
function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const smoke = process.env.BENCH_SMOKE === '1';
const CALLS = flag('--calls', smoke ? 50 : 1_000);
const ROUNDS = flag('--rounds', smoke ? 1 : 5);
const WARMUP = smoke ? 50 : 2_000;
const BLOCK = 50;
const TARGET = 1.1;
const CLI = path.resolve(
  process.argv.includes('--cli')
    ? process.argv[process.argv.indexOf('--cli') + 1]!
    : path.join(root, 'dist/cli.js'),
);
const ERA = process.argv.includes('--era') ? process.argv[process.argv.indexOf('--era') + 1] : '2025';
if (ERA !== '2025' && ERA !== '2026') throw new Error(`--era must be 2025 or 2026, got ${ERA}`);

/** The part of either SDK's client the bench uses. */
interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

async function connect(command: string, args: string[]): Promise<Caller> {
  if (ERA === '2026') {
    const client = new ModernClient(
      { name: 'bench', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new ModernStdio({ command, args, cwd: root, stderr: 'ignore' }));
    return client;
  }
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd: root, stderr: 'ignore' }));
  return client;
}

/** Times `count` sequential calls into `into`, checking every result. */
async function block(
  into: number[] | undefined,
  call: (i: number) => Promise<unknown>,
  from: number,
  count: number,
) {
  for (let i = from; i < from + count; i++) {
    const t0 = performance.now();
    const r = (await call(i)) as { content: { text: string }[]; structuredContent?: { output?: unknown } };
    into?.push(performance.now() - t0);
    // The bare server answers with text; hatchery-mcp with its one JSON result (docs/serving.md#results).
    const got = r.structuredContent ? r.structuredContent.output : r.content[0]?.text;
    if (got !== `m${i}`) throw new Error(`wrong result: ${JSON.stringify(r)}`);
  }
}

const tmp = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-'));
// The served folder inside the temp folder: the journal's default state folder is beside it.
const dir = path.join(tmp, 'served');
mkdirSync(dir);
writeFileSync(
  path.join(dir, 'echo.json'),
  JSON.stringify({
    name: 'echo_hatch',
    desc: 'one baneling that echoes its input',
    nodes: [{ name: 'Echo', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input }}' } }],
  }),
);

const tH: number[] = [];
const tB: number[] = [];
const roundRatios: number[] = [];
const perRound = Math.ceil(CALLS / ROUNDS);
for (let round = 0; round < ROUNDS; round++) {
  const hatchery = await connect(process.execPath, [
    CLI,
    '--dir',
    dir,
    '--no-generic-tools',
    // The run journal is on by default; --no-journal measures the server without it.
    ...(process.argv.includes('--no-journal') ? ['--no-journal'] : []),
  ]);
  const bare = await connect(process.execPath, [
    '--import',
    'tsx',
    path.join(root, 'bench/fixtures/echo-server.ts'),
  ]);
  const callHatchery = (i: number) =>
    hatchery.callTool({ name: 'echo_hatch', arguments: { input: `m${i}` } });
  const callBare = (i: number) => bare.callTool({ name: 'echo', arguments: { input: `m${i}` } });
  await block(undefined, callHatchery, 0, WARMUP);
  await block(undefined, callBare, 0, WARMUP);
  const rH: number[] = [];
  const rB: number[] = [];
  for (let b = 0; b * BLOCK < perRound; b++) {
    const n = Math.min(BLOCK, perRound - b * BLOCK);
    const order: [number[], (i: number) => Promise<unknown>][] =
      b % 2
        ? [
            [rH, callHatchery],
            [rB, callBare],
          ]
        : [
            [rB, callBare],
            [rH, callHatchery],
          ];
    for (const [into, call] of order) await block(into, call, b * BLOCK, n);
  }
  await hatchery.close();
  await bare.close();
  tH.push(...rH);
  tB.push(...rB);
  roundRatios.push(median(rH) / median(rB));
}
const fileCost = process.argv.includes('--no-journal') ? undefined : runFileCost(tmp, smoke ? 50 : 500);
rmSync(tmp, { recursive: true, force: true });

const mH = median(tH);
const mB = median(tB);
const ratio = mH / mB;
const us = (ms: number) => `${Math.round(ms * 1000)} µs`;
const pinned = process.env[PINNED_ENV];
console.log(
  `MCP round trip over stdio, ${ERA === '2026' ? '2026-07-28 (SDK v2 client)' : '2025-11-25 (SDK v1 client)'}, journal ${process.argv.includes('--no-journal') ? 'off' : 'on'}: ${tH.length} calls each, ${ROUNDS} rounds of fresh processes, ${WARMUP} warm-up calls per server and round, ${pinned ? `all processes pinned to CPU ${pinned}` : 'not pinned'}`,
);
console.log(`  hatchery (one baneling, echo)   median ${us(mH)}   p90 ${us(quantile(tH, 0.9))}`);
console.log(`  bare SDK echo server            median ${us(mB)}   p90 ${us(quantile(tB, 0.9))}`);
console.log(
  `  ratio hatchery / bare           ${ratio.toFixed(2)}x   (target <= ${TARGET}x: ${ratio <= TARGET ? 'met' : 'NOT met'})`,
);
console.log(`  ratio per round                 ${roundRatios.map((r) => `${r.toFixed(2)}x`).join('  ')}`);
if (fileCost) console.log(`  ${describeFileCost(fileCost, 'the state folder')}`);
if (process.argv.includes('--strict') && ratio > TARGET) process.exitCode = 1;
