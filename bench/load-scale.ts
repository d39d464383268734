// Load scaling: parse + validate + analyse + compile of one hatchery file, plus its MCP tool
// definition (what the server does at start and on every reload of the file), for files of 1,000,
// 2,000, 5,000 and 10,000 nodes. Target (issue 15): linear in node count, a 10,000-node file in at
// most 10x the time of a 1,000-node file (before: tool definitions alone were quadratic, 4 s at 10,000).
//
// The files are realistic chains: blocks of a parallel (two drone branches), a drone that saves its
// output and a drone that reads it, with templates reading earlier outputs (out.<node>), saved values
// (ctx.<name>, guarded and not) and the input. Sizes run interleaved, after a warm-up; medians.
// `--base DIST` also times another build's loader (e.g. /work/wt/base/dist, the start of issue 15),
// interleaved in the same process, for before/after figures.
// Usage: node --import tsx bench/load-scale.ts [--rounds R] [--base path/to/dist]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadHatcheryText } from '../src/loader/load.js';
import { hatcheryTool } from '../src/mcp/tool-defs.js';
import { median } from './lib/stats.js';

const smoke = process.env.BENCH_SMOKE === '1';
function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const ROUNDS = Number(option('--rounds') ?? (smoke ? 1 : 5));
const BASE = option('--base');
const SIZES = smoke ? [1_000, 2_000] : [1_000, 2_000, 5_000, 10_000];

/** A hatchery of about `nodes` nodes, in blocks of five (see the header), as JSON text. */
export function chainFile(nodes: number): string {
  const blocks = Math.max(1, Math.round(nodes / 5));
  const list: Record<string, unknown>[] = [];
  for (let k = 0; k < blocks; k++) {
    const prev = k === 0 ? '{{ ctx.input }}' : `{{ ctx.s${k - 1} }} {{ out.C${k - 1} | default("") }}`;
    list.push(
      { name: `P${k}`, type: 'parallel', branches: [`A${k}`, `B${k}`], next: `C${k}` },
      { name: `A${k}`, sys_prompt: 'You check facts.', usr_prompt: `Check: ${prev}` },
      { name: `B${k}`, usr_prompt: `Rewrite {{ ctx.input }} given ${prev}` },
      {
        name: `C${k}`,
        usr_prompt: 'Merge {{ out.P{k} }} for {{ ctx.input }}'.replace('{k}', String(k)),
        save_output: `s${k}`,
        next: `D${k}`,
      },
      {
        name: `D${k}`,
        usr_prompt: `{% if ctx.s${k} %}{{ ctx.s${k} | upper }}{% endif %} {{ out.C${k} }}`,
        ...(k + 1 < blocks ? { next: `P${k + 1}` } : {}),
      },
    );
  }
  return JSON.stringify({
    name: `chain_${nodes}`,
    desc: 'A long chain',
    model: 'openai:gpt-4o-mini',
    nodes: list,
  });
}

/** A loader under test: this tree's, or another build's. */
interface Loader {
  label: string;
  load: typeof loadHatcheryText;
  tool: typeof hatcheryTool;
}
const loaders: Loader[] = [{ label: 'this tree', load: loadHatcheryText, tool: hatcheryTool }];
if (BASE) {
  const dist = path.resolve(BASE);
  const load = await import(pathToFileURL(path.join(dist, 'loader/load.js')).href);
  const defs = await import(pathToFileURL(path.join(dist, 'mcp/tool-defs.js')).href);
  loaders.push({ label: `base ${BASE}`, load: load.loadHatcheryText, tool: defs.hatcheryTool });
}

/** Milliseconds to load `text` and build its tool definition; throws when the file does not load. */
function loadOnce(l: Loader, text: string, nodes: number): number {
  const t0 = performance.now();
  const res = l.load(text, `/tmp/chain-${nodes}.json`);
  if (!res.ok) throw new Error(res.error.message.slice(0, 500));
  const tool = l.tool(res.hatchery);
  const ms = performance.now() - t0;
  if (tool.name !== `chain_${nodes}` || res.hatchery.nodes.size !== nodes) throw new Error('unexpected load');
  return ms;
}

const texts = new Map(SIZES.map((n) => [n, chainFile(n)]));
// Warm-up: the JIT settles on each loader's code before anything is timed.
for (const l of loaders)
  for (let w = 0; w < (smoke ? 1 : 3); w++) loadOnce(l, texts.get(SIZES[0]!)!, SIZES[0]!);
const times = new Map<string, number[]>();
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? SIZES : [...SIZES].reverse();
  for (const n of order)
    for (const l of r % 2 === 0 ? loaders : [...loaders].reverse()) {
      const key = `${l.label} ${n}`;
      times.set(key, [...(times.get(key) ?? []), loadOnce(l, texts.get(n)!, n)]);
    }
}

const first = SIZES[0]!;
const last = SIZES[SIZES.length - 1]!;
const scale = last / first;
console.log(`load + tool definition of one file (${ROUNDS} rounds, medians)`);
for (const l of loaders) {
  console.log(`  ${l.label}`);
  const med = new Map(SIZES.map((n) => [n, median(times.get(`${l.label} ${n}`)!)]));
  for (const n of SIZES) {
    const ms = med.get(n)!;
    console.log(
      `    ${String(n).padStart(6)} nodes: ${ms.toFixed(1).padStart(8)} ms   ${((ms / n) * 1000).toFixed(1).padStart(6)} µs/node`,
    );
  }
  const ratio = med.get(last)! / med.get(first)!;
  console.log(
    `    ratio ${last} / ${first}: ${ratio.toFixed(2)}x for ${scale}x the nodes   (target <= ${scale}x: ${ratio <= scale ? 'met' : 'NOT met'})`,
  );
}
