// Runs each framework's chain harness in its own process, taking turns over several rounds, and prints
// the median µs per node of each at each size, with its ratio to hatchery-mcp.
// Usage (from bench/peers, after `npm install` here and `npm run build` at the root):
//   node run.mjs [--rounds R] [n ...]     e.g. node run.mjs 100 1000 5000
import { spawnSync } from 'node:child_process';
import { median } from './common.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--rounds');
const rounds = at >= 0 ? Number(args[at + 1]) : 3;
const ns = args
  .filter((_a, i) => i !== at && i !== at + 1)
  .map(Number)
  .filter((n) => n > 0);
const sizes = ns.length ? ns : [100, 1000];
const [major, minor] = process.versions.node.split('.').map(Number);
// Mastra needs Node >= 22.13: run it with a newer Node from the registry when this one is older.
const modern = major > 22 || (major === 22 && minor >= 13);
const peers = [
  { label: 'hatchery-mcp', cmd: [process.execPath, 'hatchery.mjs'] },
  { label: 'adk', cmd: [process.execPath, 'adk.mjs'] },
  { label: 'langgraph', cmd: [process.execPath, 'langgraph.mjs'] },
  {
    label: 'mastra',
    cmd: modern ? [process.execPath, 'mastra.mjs'] : ['npm', 'exec', '-y', 'node@22', '--', 'mastra.mjs'],
  },
];
const results = new Map(); // "label n" -> µs per node, one per round
for (let r = 0; r < rounds; r++) {
  for (const p of peers) {
    const out = spawnSync(p.cmd[0], [...p.cmd.slice(1), ...sizes.map(String)], {
      cwd: new URL('.', import.meta.url),
      encoding: 'utf8',
    });
    if (out.status !== 0) {
      console.error(`${p.label} failed:\n${out.stderr}`);
      continue;
    }
    for (const line of out.stdout.split('\n')) {
      const [label, n, us] = line.split('\t');
      if (us === undefined) continue;
      const key = `${label} ${n}`;
      results.set(key, [...(results.get(key) ?? []), Number(us)]);
    }
  }
}
console.log(`chain of n nodes, median µs per node over ${rounds} rounds (each round a fresh process)`);
console.log(['framework', ...sizes.map((n) => `n=${n}`), ...sizes.map((n) => `× ours n=${n}`)].join('\t'));
for (const p of peers) {
  const own = sizes.map((n) => results.get(`${p.label} ${n}`));
  const ours = sizes.map((n) => results.get(`hatchery-mcp ${n}`));
  const cells = own.map((xs) => (xs ? median(xs).toFixed(2) : 'failed'));
  const ratios = own.map((xs, i) => (xs && ours[i] ? (median(xs) / median(ours[i])).toFixed(1) : '-'));
  console.log([p.label, ...cells, ...ratios].join('\t'));
}
