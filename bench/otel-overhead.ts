// What OpenTelemetry traces cost. (a) Per node: chains of N trivial drones (scripted provider, no
// I/O) run with the endpoint unset, and set to a loopback OTLP receiver (with and without content
// capture). (b) Start-up: `hatchery-mcp run` of a one-node file, endpoint unset and set.
// With `--baseline DIR` (a checkout without telemetry, built, e.g. /work/main) its Runtime and CLI
// are measured beside this one's, endpoint unset: the "unchanged" figures. Medians, no assertions.
// Usage: node --import tsx bench/otel-overhead.ts [--baseline DIR]

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadHatcheryObject } from '../src/loader/load.js';
import { ScriptedProvider } from '../src/providers/scripted.js';
import { Runtime } from '../src/runtime/runtime.js';
import { median } from './lib/stats.js';

// BENCH_SMOKE=1 (CI's smoke step): 10 and 100 nodes, two rounds each, two start-ups per CLI.
const smoke = process.env.BENCH_SMOKE === '1';
const at = process.argv.indexOf('--baseline');
const baseline = at > 0 ? path.resolve(process.argv[at + 1] ?? '') : undefined;
const ROOT = new URL('..', import.meta.url).pathname;

// A loopback receiver that accepts every export, as a local collector would.
let received = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

function chainDef(n: number) {
  const nodes = Array.from({ length: n }, (_, i) => ({
    name: `N${i}`,
    usr_prompt: i === 0 ? '{{ ctx.input }}' : `Continue from {{ out.N${i - 1} }}`,
    ...(i < n - 1 ? { next: `N${i + 1}` } : {}),
  }));
  return { name: `chain_${n}`, desc: 'bench', max_steps: n + 1, nodes };
}

interface Mode {
  label: string;
  // biome-ignore lint/suspicious/noExplicitAny: the baseline's Runtime is the same class from another checkout.
  runtime: any;
  // biome-ignore lint/suspicious/noExplicitAny: its hatchery, loaded by its own loader.
  load: (n: number) => any;
}

function load(n: number) {
  const res = loadHatcheryObject(chainDef(n), '/tmp/bench.json');
  if (!res.ok) throw res.error;
  return res.hatchery;
}

const model = () => new ScriptedProvider(() => 'ok', { record: false });
const modes: Mode[] = [
  { label: 'endpoint unset', runtime: new Runtime({ providers: { openai: model() }, env: {} }), load },
  {
    label: 'endpoint set',
    runtime: new Runtime({ providers: { openai: model() }, env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } }),
    load,
  },
  {
    label: 'set + content',
    runtime: new Runtime({
      providers: { openai: model() },
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      },
    }),
    load,
  },
];
if (baseline) {
  const src = (f: string) => pathToFileURL(path.join(baseline, 'src', f)).href;
  const { Runtime: BaseRuntime } = await import(src('runtime/runtime.ts'));
  const { loadHatcheryObject: baseLoad } = await import(src('loader/load.ts'));
  const { ScriptedProvider: BaseScripted } = await import(src('providers/scripted.ts'));
  modes.unshift({
    label: 'baseline',
    runtime: new BaseRuntime({
      providers: { openai: new BaseScripted(() => 'ok', { record: false }) },
      env: {},
    }),
    load: (n) => {
      const res = baseLoad(chainDef(n), '/tmp/bench.json');
      if (!res.ok) throw res.error;
      return res.hatchery;
    },
  });
}

console.log(
  '(a) per-node overhead (median µs/node, scripted provider; spans exported to a loopback receiver)',
);
console.log(['nodes', ...modes.map((m) => m.label)].join('\t'));
for (const n of smoke ? [10, 100] : [10, 100, 1000]) {
  const hs = modes.map((m) => m.load(n));
  const per = modes.map(() => [] as number[]);
  const runs = smoke ? 2 : n >= 1000 ? 15 : 31;
  // Modes take turns in every round, so a noisy neighbour slows them alike; 3 warm-up rounds.
  for (let i = -3; i < runs; i++) {
    for (let m = 0; m < modes.length; m++) {
      // The spans of the traced modes are garbage for the next mode: collect it outside the timing.
      globalThis.gc?.();
      const t0 = performance.now();
      await modes[m]!.runtime.run(hs[m], { input: 'go' });
      if (i >= 0) per[m]!.push(((performance.now() - t0) * 1000) / n);
    }
  }
  console.log([n, ...per.map((p) => median(p).toFixed(2))].join('\t'));
}
for (const m of modes) await m.runtime.close();
console.log(`exports received: ${received}`);

// (b) Start-up: the whole `run` command of a one-node file, process start to exit.
const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-bench-otel-'));
const file = path.join(dir, 'one.json');
writeFileSync(
  file,
  JSON.stringify({
    name: 'one',
    desc: 'bench',
    nodes: [{ name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: 'hi' } }],
  }),
);
const cliEnv = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  HATCHERY_STATE: path.join(dir, 'runs'),
};
const clis: { label: string; cli: string; env: Record<string, string> }[] = [
  { label: 'endpoint unset', cli: path.join(ROOT, 'dist/cli.js'), env: cliEnv },
  {
    label: 'endpoint set',
    cli: path.join(ROOT, 'dist/cli.js'),
    env: { ...cliEnv, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
  },
];
if (baseline) clis.unshift({ label: 'baseline', cli: path.join(baseline, 'dist/cli.js'), env: cliEnv });
const times = clis.map(() => [] as number[]);
for (let i = smoke ? -1 : -2; i < (smoke ? 2 : 15); i++) {
  for (let c = 0; c < clis.length; c++) {
    const t0 = performance.now();
    // Asynchronous spawn: the receiver in this process must answer the CLI's export.
    await new Promise<void>((resolve, reject) => {
      const child = spawnAsync(clis[c]!.cli, clis[c]!.env);
      child.on('error', reject);
      child.on('close', (code: number) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
    });
    if (i >= 0) times[c]!.push(performance.now() - t0);
  }
}
console.log('\n(b) CLI start-up: `run` of a one-node file, process start to exit (median ms)');
for (let c = 0; c < clis.length; c++) console.log(`${clis[c]!.label}\t${median(times[c]!).toFixed(1)}`);
server.close();

function spawnAsync(cli: string, env: Record<string, string>) {
  return spawn(process.execPath, [cli, 'run', file, '--input', 'x'], { env, stdio: 'ignore' });
}
