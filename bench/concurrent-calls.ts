// Concurrent one-drone calls over stdio: `hatchery-mcp serve` with a one-drone hatchery (journal on, as
// served by default) against its floor, a bare MCP SDK v2 server whose one tool makes the same `openai`
// SDK chat.completions.create call, both against one fake OpenAI-compatible server on loopback that
// answers after 100 ms (test/fakes/serve.ts, in its own process). Targets of issue 15: 1,000 calls sent
// at once take at most 1.1x the bare server's time; with 50 calls in flight the hatchery server reaches
// at least 0.95x the bare server's throughput.
//
// Method: several rounds, each with fresh server processes and a warm-up; inside a round the two
// servers alternate (burst of N calls at once, then a fixed count with 50 in flight), so drift hits
// both alike. The fake's own speed is checked first: the openai SDK alone, N calls at once from this
// process, must take little more than the 100 ms latency (else the fake would be the bottleneck).
// `serve` runs at most --max-concurrent runs at once; its default is no limit, so 1,000 calls all run.
//
// Usage: npm run build && node --import tsx bench/concurrent-calls.ts [--cli dist/cli.js] [--rounds R]
//          [--burst N] [--inflight-calls M] [--no-journal] [--max-concurrent N] [--latency-ms MS] [--prof DIR]
// (`--cli /work/wt/base/dist/cli.js` measures another build, e.g. the one before a change.)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { median } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;
const smoke = process.env.BENCH_SMOKE === '1';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const num = (name: string, fallback: number) => Number(option(name) ?? fallback);

// ---- The bare server (this file, run with --bare-server): SDK v2 + the openai SDK, nothing else. ----
if (process.argv.includes('--bare-server')) {
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

/** The part of the SDK client the bench uses. */
interface Caller {
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema?: undefined,
    options?: { timeout: number },
  ): Promise<unknown>;
  close(): Promise<void>;
}

async function main(): Promise<void> {
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
  // A CPU profile of each hatchery server, written to this folder when the server exits.
  const prof = option('--prof');

  // The fake model server, in its own process so that neither side pays for it.
  const fake = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'test/fakes/serve.ts'),
      '--latency-ms',
      String(LATENCY_MS),
      '--exit-on-stdin-close',
    ],
    { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    fake.once('error', reject);
    fake.once('exit', (code) => reject(new Error(`the fake server exited (${code})`)));
    createInterface({ input: fake.stdout! }).once('line', resolve);
  });
  const baseURL = (JSON.parse(line) as { openai: string }).openai;
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
  Object.assign(env, { OPENAI_API_KEY: apiKey, OPENAI_BASE_URL: baseURL, HOME: tmp });

  async function connect(command: string, args: string[]): Promise<Caller> {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, cwd: root, env, stderr: 'ignore' }));
    return client as unknown as Caller;
  }

  let state = 0;
  const startHatchery = () =>
    connect(process.execPath, [
      ...(prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : []),
      cli,
      'serve',
      '--dir',
      served,
      '--no-generic-tools',
      ...(journal ? ['--state', path.join(tmp, `state-${state++}`)] : ['--no-journal']),
      ...(maxConcurrent ? ['--max-concurrent', maxConcurrent] : []),
    ]);
  const startBare = () =>
    connect(process.execPath, [
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

  const bH: number[] = [];
  const bB: number[] = [];
  const tH: number[] = [];
  const tB: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const hatchery = await startHatchery();
    const bare = await startBare();
    const h = hatcheryCall(hatchery);
    const b = bareCall(bare);
    await inflight(h, WARMUP, INFLIGHT);
    await inflight(b, WARMUP, INFLIGHT);
    await burst(h, Math.min(BURST, 200));
    await burst(b, Math.min(BURST, 200));
    // Alternate which server goes first from round to round.
    const pairs: [Call, number[], number[]][] =
      round % 2
        ? [
            [h, bH, tH],
            [b, bB, tB],
          ]
        : [
            [b, bB, tB],
            [h, bH, tH],
          ];
    for (const [call, bursts] of pairs) bursts.push(await burst(call, BURST));
    for (const [call, , rates] of pairs) rates.push(await inflight(call, INFLIGHT_CALLS, INFLIGHT));
    await hatchery.close();
    await bare.close();
  }
  fake.stdin?.end();
  await new Promise((r) => fake.once('exit', r));
  rmSync(tmp, { recursive: true, force: true });

  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const burstRatio = median(bH) / median(bB);
  const rateRatio = median(tH) / median(tB);
  console.log(
    `concurrent one-drone calls over stdio (SDK v1 client), model answers after ${LATENCY_MS} ms, journal ${journal ? 'on' : 'off'}, --max-concurrent ${maxConcurrent ?? 'unset (serve default: no limit)'}; ${ROUNDS} rounds of fresh processes; ${path.relative(root, cli) || cli}`,
  );
  console.log(
    `  fake server check: openai SDK alone, ${BURST} calls at once   median ${ms(median(fakeTimes))} (floor ${LATENCY_MS} ms)`,
  );
  console.log(
    `  ${BURST} calls at once   hatchery median ${ms(median(bH))}   bare SDK + openai median ${ms(median(bB))}`,
  );
  console.log(`    per round          hatchery ${bH.map(ms).join(' ')}   bare ${bB.map(ms).join(' ')}`);
  console.log(
    `    ratio hatchery / bare ${burstRatio.toFixed(2)}x   (target <= 1.1x: ${burstRatio <= 1.1 ? 'met' : 'NOT met'})`,
  );
  const rate = (x: number) => `${x.toFixed(0)} calls/s`;
  console.log(
    `  ${INFLIGHT} in flight (${INFLIGHT_CALLS} calls)   hatchery median ${rate(median(tH))}   bare median ${rate(median(tB))} (ideal ${((INFLIGHT * 1000) / LATENCY_MS).toFixed(0)})`,
  );
  console.log(
    `    per round          hatchery ${tH.map((x) => x.toFixed(0)).join(' ')}   bare ${tB.map((x) => x.toFixed(0)).join(' ')}`,
  );
  console.log(
    `    ratio hatchery / bare ${rateRatio.toFixed(2)}x   (target >= 0.95x: ${rateRatio >= 0.95 ? 'met' : 'NOT met'})`,
  );
}
