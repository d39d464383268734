// Load scaling: parse + validate + analyse + compile of one hatchery file, plus its MCP tool
// definition (what the server does at start and on every reload of the file), for files of 1,000,
// 2,000, 5,000 and 10,000 nodes. Target (issue 15): linear in node count, a 10,000-node file in at
// most 10x the time of a 1,000-node file (before: tool definitions alone were quadratic, 4 s at 10,000).
//
// Two shapes. `chain`: realistic chains, blocks of a parallel (two drone branches), a drone that saves
// its output and a drone that reads it, with templates reading earlier outputs (out.<node>), saved
// values (ctx.<name>, guarded and not) and the input. `wide`: one parallel of n - 2 drone branches and a
// join, a branch saving a value another branch and the join read (the analysis of sibling saves was
// quadratic in the width: 8,000 branches took 35 s).
// Method: every size is timed in a child process of its own, so no size pays for the garbage of
// another (with one shared heap, the GC of earlier large loads landed on whichever size ran next and
// the ratio swung between 9.4x and 13.7x from run to run). Each child warms the loader up on the
// same 1,000-node file, then times a few loads, each after a full GC (settled heap); its median is
// one sample. Rounds interleave the sizes (and the builds); the figure is the median over rounds.
// `--base DIST` also times another build's loader (e.g. /work/wt/base/dist, the start of issue 15),
// in the same rounds, for before/after figures.
// Usage: node --import tsx bench/load-scale.ts [--rounds R] [--base path/to/dist]
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadHatcheryText } from '../src/loader/load.js';
import { hatcheryTool } from '../src/mcp/tool-defs.js';
import { median } from './lib/stats.js';

const smoke = process.env.BENCH_SMOKE === '1';
function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const ROUNDS = Number(option('--rounds') ?? (smoke ? 1 : 3));
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

/** A parallel of `nodes` - 2 drone branches and a join (see the header), as JSON text. */
export function wideFile(nodes: number): string {
  const names = Array.from({ length: Math.max(2, nodes - 2) }, (_, i) => `B${i}`);
  const branches = names.map((name, i) =>
    i === 0
      ? { name, usr_prompt: 'Outline {{ ctx.input }}', save_output: 'outline' }
      : { name, usr_prompt: `Part ${i} of {{ ctx.input }} {{ ctx.outline | default("") }}` },
  );
  return JSON.stringify({
    name: `wide_${nodes}`,
    desc: 'A wide parallel',
    model: 'openai:gpt-4o-mini',
    max_steps: nodes + 1,
    nodes: [
      { name: 'P', type: 'parallel', branches: names, next: 'J' },
      ...branches,
      { name: 'J', usr_prompt: 'Join {{ out.P }} after {{ ctx.outline }}' },
    ],
  });
}

/** The file of each shape. */
const SHAPES = { chain: chainFile, wide: wideFile } as const;
type Shape = keyof typeof SHAPES;

/** A loader under test: this tree's (undefined), or another build's dist folder. */
type Build = string | undefined;

/** The child's side: warm up, then time `reps` loads of a `nodes`-node file, each on a settled heap. */
async function child(shape: Shape, nodes: number, dist: Build, reps: number): Promise<void> {
  let load = loadHatcheryText;
  let tool = hatcheryTool;
  if (dist) {
    load = (await import(pathToFileURL(path.join(dist, 'loader/load.js')).href)).loadHatcheryText;
    tool = (await import(pathToFileURL(path.join(dist, 'mcp/tool-defs.js')).href)).hatcheryTool;
  }
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the child needs --expose-gc');
  const loadOnce = (n: number, text: string, kind: Shape = 'chain'): number => {
    const t0 = performance.now();
    const res = load(text, `/tmp/${kind}-${n}.json`);
    if (!res.ok) throw new Error(res.error.message.slice(0, 500));
    const def = tool(res.hatchery);
    const ms = performance.now() - t0;
    if (def.name !== `${kind}_${n}` || res.hatchery.nodes.size !== n) throw new Error('unexpected load');
    return ms;
  };
  // Warm-up: the same for every size, so the JIT state each timed load starts from is the same.
  const warm = chainFile(1_000);
  for (let w = 0; w < (smoke ? 1 : 3); w++) loadOnce(1_000, warm);
  const text = SHAPES[shape](nodes);
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    gc();
    times.push(loadOnce(nodes, text, shape));
  }
  process.stdout.write(`${JSON.stringify({ ms: median(times) })}\n`);
}

/** Runs one child (a size and a build) and returns its median load in milliseconds. */
function sample(shape: Shape, nodes: number, dist: Build): number {
  const args = [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--child', String(nodes)];
  args.push('--shape', shape);
  if (dist) args.push('--dist', dist);
  args.push('--reps', String(smoke ? 1 : 3));
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  const last = out.trim().split('\n').pop() ?? '';
  return (JSON.parse(last) as { ms: number }).ms;
}

const childSize = option('--child');
if (childSize !== undefined) {
  await child(
    (option('--shape') ?? 'chain') as Shape,
    Number(childSize),
    option('--dist'),
    Number(option('--reps') ?? 3),
  );
  process.exit(0);
}

const builds: { label: string; dist: Build }[] = [{ label: 'this tree', dist: undefined }];
if (BASE) builds.push({ label: `base ${BASE}`, dist: path.resolve(BASE) });
const times = new Map<string, number[]>();
const shapes = Object.keys(SHAPES) as Shape[];
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? SIZES : [...SIZES].reverse();
  for (const shape of shapes)
    for (const n of order)
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        const key = `${shape} ${b.label} ${n}`;
        times.set(key, [...(times.get(key) ?? []), sample(shape, n, b.dist)]);
      }
}

const first = SIZES[0]!;
const last = SIZES[SIZES.length - 1]!;
const scale = last / first;
console.log(`load + tool definition of one file (${ROUNDS} rounds of a child process per size, medians)`);
for (const shape of shapes)
  for (const { label: l } of builds) {
    console.log(`  ${shape}, ${l}`);
    const med = new Map(SIZES.map((n) => [n, median(times.get(`${shape} ${l} ${n}`)!)]));
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
