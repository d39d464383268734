// Concurrent one-drone calls over stdio: `hatchery-mcp serve` with a one-drone hatchery (journal on, as
// served by default) against its floor, a bare MCP SDK v2 server whose one tool makes the same `openai`
// SDK chat.completions.create call, both against one fake OpenAI-compatible server on loopback that
// answers after 100 ms (--fake-server below, in its own process). Targets (docs/architecture.md,
// "Performance rules", and bench/README.md): 1,000 calls sent at once take at most 1.3x the bare server's
// time; with 50 calls in flight the hatchery server reaches at least 0.95x the bare server's throughput.
//
// Method: several rounds, each with fresh server processes and a warm-up; inside a round the two
// servers alternate (burst of N calls at once, then a fixed count with 50 in flight), so drift hits
// both alike, with a pause of 300 ms after each measure, so that what one server still does after its
// last reply (garbage collection, its journal's last writes) falls in no other server's measure. The fake's own speed is checked first: the openai SDK alone, N calls at once from this
// process, must take little more than the 100 ms latency (else the fake would be the bottleneck).
// `serve` runs at most --max-concurrent runs at once; its default is no limit, so 1,000 calls all run.
//
// Usage: npm run build && node --import tsx bench/concurrent-calls.ts [--cli dist/cli.js] [--rounds R]
//          [--burst N] [--inflight-calls M] [--no-journal] [--max-concurrent N] [--latency-ms MS] [--prof DIR [--prof-interval US]] [--base-cli PATH]...
//          [--journal-off-side] [--settle-ms MS]
// (`--cli /work/wt/base/dist/cli.js` measures another build instead, e.g. the one before a change;
// `--base-cli` measures it beside this one in the same rounds; `--journal-off-side` adds this build with
// --no-journal as one more side, so the journal's own cost is measured in the same rounds.)
// The journals go to a temp folder (TMPDIR=DIR puts them elsewhere): the bench prints what creating
// one run file costs there, since the journal creates one per call and that cost is the file
// system's (0.02-1 ms of kernel CPU, see bench/lib/file-cost.ts); the server CPU line shows its kernel part.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { describeFileCost, runFileCost } from './lib/file-cost.js';
import { median } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;
const smoke = process.env.BENCH_SMOKE === '1';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const num = (name: string, fallback: number) => Number(option(name) ?? fallback);

// ---- The fake model (this file, run with --fake-server MS): OpenAI chat completions answered after
// MS ms with "echo: <last message>". As small as can be, so that it is nobody's bottleneck (the
// richer test/fakes server records and hashes every request). Ends when its stdin closes. ----
if (process.argv.includes('--fake-server')) {
  const { createServer } = await import('node:http');
  const latency = Number(process.argv[process.argv.indexOf('--fake-server') + 1]);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        messages: { content: string }[];
      };
      const text = `echo: ${body.messages[body.messages.length - 1]?.content ?? ''}`;
      const reply = JSON.stringify({
        id: 'chatcmpl-bench',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(reply);
      }, latency);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`http://127.0.0.1:${port}/v1\n`);
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else if (process.argv.includes('--bare-server')) {
  const { McpServer } = await import('@modelcontextprotocol/server');
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  const { z } = await import('zod');
  const { default: OpenAI } = await import('openai');
  const openai = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL });
  serveStdio(() => {
    const server = new McpServer({ name: 'bare-ask', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool(
      'ask',
      { description: 'Asks the model', inputSchema: z.object({ input: z.string() }) },
      async ({ input }, ctx) => {
        const r = await openai.chat.completions.create(
          { model: 'gpt-4o-mini', messages: [{ role: 'user', content: input }] },
          { signal: ctx.mcpReq.signal },
        );
        return { content: [{ type: 'text', text: r.choices[0]?.message.content ?? '' }] };
      },
    );
    return server;
  });
} else {
  await main();
}

/** A server under test: its client, and its CPU time and garbage collections so far. */
interface Server {
  client: Caller;
  cpu: () => ReturnType<typeof cpuMs>;
  gc: () => Promise<GcCounts | undefined>;
}

/** Garbage collections of a server so far (bench/lib/gc-count.mjs). */
interface GcCounts {
  seq: number;
  minor: number;
  major: number;
  /** Bytes allocated so far. */
  allocated: number;
}

/** Asks a server's gc-count preload for its counts so far (SIGUSR2) and waits for them; undefined if none come. */
async function gcCounts(pid: number | null | undefined, dir: string): Promise<GcCounts | undefined> {
  if (!pid) return undefined;
  const file = path.join(dir, `${pid}.json`);
  const read = (): GcCounts | undefined => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as GcCounts;
    } catch {
      return undefined;
    }
  };
  const seq = read()?.seq ?? 0;
  try {
    process.kill(pid, 'SIGUSR2');
  } catch {
    return undefined;
  }
  for (let i = 0; i < 400; i++) {
    const now = read();
    if (now && now.seq > seq) return now;
    await new Promise((r) => setTimeout(r, 5));
  }
  return undefined;
}

/** The part of the SDK client the bench uses. */
interface Caller {
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema?: undefined,
    options?: { timeout: number },
  ): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * CPU time (user + system, and system alone) a process used so far, in ms, from /proc (Linux);
 * undefined elsewhere. Unlike wall time it hardly depends on what else the machine runs, so it is the
 * steadier figure on a loaded machine.
 */
function cpuMs(
  pid: number | null | undefined,
): { total: number; system: number; main: number; other: number } | undefined {
  if (!pid) return undefined;
  try {
    const [user, system] = ticks(`/proc/${pid}/stat`);
    // Where it went: the JavaScript thread, or the others (V8's helpers: concurrent and parallel GC,
    // compiling; libuv's pool: async file calls). Node 20 names them all "node", so no finer split.
    let main = 0;
    let other = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [u, s] = ticks(`/proc/${pid}/task/${tid}/stat`);
        if (tid === String(pid)) main += u + s;
        else other += u + s;
      } catch {
        // The thread ended meanwhile.
      }
    }
    return { total: (user + system) * 10, system: system * 10, main: main * 10, other: other * 10 };
  } catch {
    return undefined;
  }
}

/** utime and stime of a /proc stat line (fields 14 and 15, 12 and 13 after the name), in clock ticks (100 Hz). */
function ticks(file: string): [number, number] {
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]), Number(fields[12])];
}

async function main(): Promise<void> {
  // The client's stdio socket waits for 'drain' once per call written while it is full: 1,000 at once is the point.
  EventEmitter.defaultMaxListeners = 4 * 1_000;
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { default: OpenAI } = await import('openai');

  const ROUNDS = num('--rounds', smoke ? 1 : 5);
  const BURST = num('--burst', smoke ? 50 : 1_000);
  const INFLIGHT = 50;
  const INFLIGHT_CALLS = num('--inflight-calls', smoke ? 50 : 1_000);
  const WARMUP = smoke ? 20 : 500;
  const LATENCY_MS = num('--latency-ms', 100);
  const cli = path.resolve(option('--cli') ?? path.join(root, 'dist/cli.js'));
  const journal = !process.argv.includes('--no-journal');
  const maxConcurrent = option('--max-concurrent');
  // A CPU profile of each server (the bare one's in DIR/bare), written to this folder when it exits.
  const prof = option('--prof');
  // Microseconds between samples (node's default 1000 leaves a few samples per function per round).
  const profFlags = prof
    ? [
        '--cpu-prof',
        ...(option('--prof-interval') ? ['--cpu-prof-interval', option('--prof-interval')!] : []),
      ]
    : [];
  // Other builds measured in the same rounds (before/after in one run), e.g. /work/wt/base/dist/cli.js.
  const baseClis = process.argv.flatMap((a, i) =>
    a === '--base-cli' && process.argv[i + 1] ? [path.resolve(process.argv[i + 1]!)] : [],
  );

  // The fake model server, in its own process so that neither side pays for it.
  const fake = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'bench/concurrent-calls.ts'), '--fake-server', String(LATENCY_MS)],
    { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    fake.once('error', reject);
    fake.once('exit', (code) => reject(new Error(`the fake server exited (${code})`)));
    createInterface({ input: fake.stdout! }).once('line', resolve);
  });
  const baseURL = line.trim();
  const apiKey = 'sk-bench-not-a-real-key';

  const tmp = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-calls-'));
  const served = path.join(tmp, 'served');
  mkdirSync(served);
  writeFileSync(
    path.join(served, 'ask.json'),
    JSON.stringify({
      name: 'ask_hatch',
      desc: 'one drone that asks the model',
      model: 'openai:gpt-4o-mini',
      nodes: [{ name: 'Ask', usr_prompt: '{{ ctx.input }}' }],
    }),
  );
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.HATCHERY_STATE;
  // Each server counts its garbage collections (bench/lib/gc-count.mjs) and writes them here on SIGUSR2.
  const gcDir = path.join(tmp, 'gc');
  mkdirSync(gcDir);
  Object.assign(env, {
    OPENAI_API_KEY: apiKey,
    OPENAI_BASE_URL: baseURL,
    HOME: tmp,
    HATCHERY_BENCH_GC_DIR: gcDir,
  });
  const gcPreload = ['--import', pathToFileURL(path.join(root, 'bench/lib/gc-count.mjs')).href];

  async function connect(command: string, args: string[]): Promise<Server> {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    const transport = new StdioClientTransport({ command, args, cwd: root, env, stderr: 'ignore' });
    await client.connect(transport);
    return {
      client: client as unknown as Caller,
      cpu: () => cpuMs(transport.pid),
      gc: () => gcCounts(transport.pid, gcDir),
    };
  }

  let state = 0;
  const startHatchery = (bin: string, withJournal = journal) =>
    connect(process.execPath, [
      ...(prof ? [...profFlags, '--cpu-prof-dir', prof] : []),
      ...gcPreload,
      bin,
      'serve',
      '--dir',
      served,
      '--no-generic-tools',
      ...(withJournal ? ['--state', path.join(tmp, `state-${state++}`)] : ['--no-journal']),
      ...(maxConcurrent ? ['--max-concurrent', maxConcurrent] : []),
    ]);
  const startBare = () =>
    connect(process.execPath, [
      ...(prof ? [...profFlags, '--cpu-prof-dir', path.join(prof, 'bare')] : []),
      ...gcPreload,
      '--import',
      'tsx',
      path.join(root, 'bench/concurrent-calls.ts'),
      '--bare-server',
    ]);

  type Call = (i: number) => Promise<void>;
  const expect = (i: number, got: unknown) => {
    if (got !== `echo: m${i}`) throw new Error(`wrong result for call ${i}: ${JSON.stringify(got)}`);
  };
  // Long enough for a burst queued behind a slow server.
  const opts = { timeout: 600_000 };
  const hatcheryCall =
    (c: Caller): Call =>
    async (i) => {
      const r = (await c.callTool({ name: 'ask_hatch', arguments: { input: `m${i}` } }, undefined, opts)) as {
        structuredContent?: { output?: unknown };
        content: { text: string }[];
      };
      expect(i, r.structuredContent?.output ?? r.content[0]?.text);
    };
  const bareCall =
    (c: Caller): Call =>
    async (i) => {
      const r = (await c.callTool({ name: 'ask', arguments: { input: `m${i}` } }, undefined, opts)) as {
        content: { text: string }[];
      };
      expect(i, r.content[0]?.text);
    };

  /** ms for `n` calls sent at once. */
  async function burst(call: Call, n: number): Promise<number> {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: n }, (_, i) => call(i)));
    return performance.now() - t0;
  }
  /** Calls per second for `n` calls with `width` in flight at all times. */
  async function inflight(call: Call, n: number, width: number): Promise<number> {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < n) await call(next++);
      }),
    );
    return n / ((performance.now() - t0) / 1000);
  }

  // The fake must not be the bottleneck: the openai SDK alone, a burst from this process.
  const sdk = new OpenAI({ apiKey, baseURL });
  const sdkCall: Call = async (i) => {
    const r = await sdk.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `m${i}` }],
    });
    expect(i, r.choices[0]?.message.content);
  };
  await burst(sdkCall, Math.min(BURST, 200));
  const fakeTimes: number[] = [];
  for (let i = 0; i < (smoke ? 1 : 3); i++) fakeTimes.push(await burst(sdkCall, BURST));

  /** One server measured each round: how to start it and call it, and its figures. */
  interface Side {
    name: string;
    start: () => Promise<Server>;
    call: (c: Caller) => Call;
    bursts: number[];
    rates: number[];
    /** The server's CPU time per call over the measured calls of each round, in µs. */
    cpu: number[];
    /** The kernel's part of it (file creation, writes, pipes). */
    system: number[];
    /** The JavaScript thread's part, and the other threads' (V8's GC helpers, libuv's pool), in µs per call. */
    threads: { main: number[]; other: number[] };
    /** Young-generation collections per 1,000 measured calls (follows allocation, not the machine's load). */
    minorGcs: number[];
    /** KiB allocated per measured call. */
    allocKiB: number[];
  }
  const side = (name: string, start: Side['start'], call: (c: Caller) => Call): Side => ({
    name,
    start,
    call,
    bursts: [],
    rates: [],
    cpu: [],
    system: [],
    threads: { main: [], other: [] },
    minorGcs: [],
    allocKiB: [],
  });
  const bare = side('bare SDK + openai', startBare, bareCall);
  const hatch = side(`hatchery (${path.relative(root, cli) || cli})`, () => startHatchery(cli), hatcheryCall);
  const sides = [bare, hatch];
  for (const b of baseClis) sides.push(side(`hatchery (${b})`, () => startHatchery(b), hatcheryCall));
  if (journal && process.argv.includes('--journal-off-side'))
    sides.push(side('hatchery, --no-journal', () => startHatchery(cli, false), hatcheryCall));
  for (let round = 0; round < ROUNDS; round++) {
    const open = await Promise.all(sides.map(async (s) => ({ s, server: await s.start() })));
    const calls = open.map(({ s, server }) => ({ s, server, call: s.call(server.client) }));
    for (const { call } of calls) await inflight(call, WARMUP, INFLIGHT);
    for (const { call } of calls) await burst(call, Math.min(BURST, 200));
    const cpu0 = calls.map(({ server }) => server.cpu());
    const gc0 = await Promise.all(calls.map(({ server }) => server.gc()));
    // A different server goes first from round to round, so drift hits them alike.
    const order = calls.map((_, k) => calls[(k + round) % calls.length]!);
    // A pause after each measure: what a server still does after its last reply (collecting garbage,
    // its journal's last writes) then falls in no other server's measure.
    for (const { s, call } of order) {
      s.bursts.push(await burst(call, BURST));
      await settle();
    }
    for (const { s, call } of order) {
      s.rates.push(await inflight(call, INFLIGHT_CALLS, INFLIGHT));
      await settle();
    }
    const gc1 = await Promise.all(calls.map(({ server }) => server.gc()));
    calls.forEach(({ s }, k) => {
      const [a, b] = [gc0[k], gc1[k]];
      if (a && b) {
        s.minorGcs.push(((b.minor - a.minor) * 1000) / (BURST + INFLIGHT_CALLS));
        s.allocKiB.push((b.allocated - a.allocated) / 1024 / (BURST + INFLIGHT_CALLS));
      }
    });
    calls.forEach(({ s, server }, k) => {
      const used = server.cpu();
      const before = cpu0[k];
      if (used !== undefined && before !== undefined) {
        s.cpu.push(((used.total - before.total) * 1000) / (BURST + INFLIGHT_CALLS));
        s.system.push(((used.system - before.system) * 1000) / (BURST + INFLIGHT_CALLS));
        for (const t of ['main', 'other'] as const)
          s.threads[t].push(((used[t] - before[t]) * 1000) / (BURST + INFLIGHT_CALLS));
      }
    });
    await Promise.all(open.map(({ server }) => server.client.close()));
  }
  // Measured where the servers kept their journals, after they ran (the folder's state then): in a
  // fresh folder beside theirs, and in the last server's own folder (where a file can cost far more,
  // as where a folder's inodes lie decides it: 20 µs to 1 ms of kernel CPU on this machine's ext4).
  const fileCost = runFileCost(tmp, smoke ? 50 : 500);
  const ownFolder = path.join(tmp, `state-${state - 1}`);
  const ownFileCost = journal && state > 0 ? runFileCost(ownFolder, smoke ? 50 : 500, true) : undefined;
  fake.stdin?.end();
  await new Promise((r) => fake.once('exit', r));
  rmSync(tmp, { recursive: true, force: true });

  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const rate = (x: number) => `${x.toFixed(0)} calls/s`;
  const ratios = (of: Side, key: 'bursts' | 'rates') => of[key].map((x, r) => x / bare[key][r]!);
  console.log(
    `concurrent one-drone calls over stdio (SDK v1 client), model answers after ${LATENCY_MS} ms, journal ${journal ? 'on' : 'off'}, --max-concurrent ${maxConcurrent ?? 'unset (serve default: no limit)'}; ${ROUNDS} rounds of fresh processes`,
  );
  console.log(
    `  fake server check: the openai SDK alone, ${BURST} calls at once from this process: median ${ms(median(fakeTimes))} (latency ${LATENCY_MS} ms)`,
  );
  console.log(`  ${BURST} calls at once (median; per round):`);
  for (const s of sides)
    console.log(`    ${s.name.padEnd(44)} ${ms(median(s.bursts))}   (${s.bursts.map(ms).join(', ')})`);
  console.log(
    `  ${INFLIGHT} in flight, ${INFLIGHT_CALLS} calls (median; per round; ideal ${(INFLIGHT * 1000) / LATENCY_MS}):`,
  );
  for (const s of sides)
    console.log(
      `    ${s.name.padEnd(44)} ${rate(median(s.rates))}   (${s.rates.map((x) => x.toFixed(0)).join(', ')})`,
    );
  if (bare.cpu.length > 0) {
    console.log(
      '  server CPU time per measured call (user + system; hardly moved by the load of the machine):',
    );
    for (const s of sides)
      console.log(
        `    ${s.name.padEnd(44)} ${median(s.cpu).toFixed(0)} µs   (${s.cpu.map((x) => x.toFixed(0)).join(', ')}), of which kernel ${median(s.system).toFixed(0)} µs; JavaScript thread ${median(s.threads.main).toFixed(0)} µs, other threads (GC helpers, libuv pool) ${median(s.threads.other).toFixed(0)} µs`,
      );
  }
  if (bare.allocKiB.length > 0) {
    console.log(
      '  server memory allocated per measured call, and young-generation collections per 1,000 calls (both follow what a call allocates, not the load):',
    );
    for (const s of sides)
      console.log(
        `    ${s.name.padEnd(44)} ${median(s.allocKiB).toFixed(1)} KiB   (${s.allocKiB.map((x) => x.toFixed(1)).join(', ')}); ${median(s.minorGcs).toFixed(1)} collections`,
      );
  }
  if (journal) console.log(`  ${describeFileCost(fileCost, 'a fresh folder beside the state folders')}`);
  if (ownFileCost) console.log(`  ${describeFileCost(ownFileCost, 'the last server’s state folder')}`);
  for (const s of sides.slice(1)) {
    if (s.cpu.length > 0)
      console.log(
        `  ${s.name}: ${(median(s.cpu) / median(bare.cpu)).toFixed(2)}x the bare server's CPU per call`,
      );
    if (s.allocKiB.length > 0)
      console.log(
        `  ${s.name}: ${(median(s.allocKiB) / median(bare.allocKiB)).toFixed(2)}x the bare server's memory allocated per call (${(median(s.minorGcs) / median(bare.minorGcs)).toFixed(2)}x its young-generation collections)`,
      );
    const b = median(s.bursts) / median(bare.bursts);
    const t = median(s.rates) / median(bare.rates);
    console.log(`  ${s.name}:`);
    console.log(
      `    ${BURST} at once: ${b.toFixed(2)}x the bare server (median of per-round ratios ${median(ratios(s, 'bursts')).toFixed(2)}x)   (target <= 1.3x: ${b <= 1.3 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `    ${INFLIGHT} in flight: ${t.toFixed(2)}x its throughput (median of per-round ratios ${median(ratios(s, 'rates')).toFixed(2)}x)   (target >= 0.95x: ${t >= 0.95 ? 'met' : 'NOT met'})`,
    );
  }
}

/** Waits for a server's trailing work after a measure (see the rounds in main). */
function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, num('--settle-ms', smoke ? 20 : 300)));
}
