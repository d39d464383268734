// Memory of js: tool hot reload: edits a 50 KB module N times (default 1,500), calling its tool after
// each edit as a run would, then reports RSS and heap before and after (after a forced GC).
// Node never unloads an ES module, so every distinct version imported stays in memory: the loader
// bounds the versions per module (MAX_JS_MODULE_VERSIONS) and reuses the import of a content it saw.
// Usage: node --expose-gc --import tsx bench/js-reload-memory.ts [--edits N]
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PathGuard } from '../src/core/fs/paths.js';
import type { Scope } from '../src/engine/scope.js';
import { JsTools } from '../src/tools/js.js';
import { parseToolRef } from '../src/tools/refs.js';

const argEdits = process.argv.indexOf('--edits');
// BENCH_SMOKE=1 (CI's smoke step): 30 edits.
const EDITS = argEdits > 0 ? Number(process.argv[argEdits + 1]) : process.env.BENCH_SMOKE === '1' ? 30 : 1500;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-js-mem-'));
const file = path.join(dir, 'tool.mjs');
// About 50 KB of code: a function over a large table, as a real tool module might have.
const table = Array.from({ length: 2500 }, (_, i) => `  'entry_${i}_${'x'.repeat(8)}',`).join('\n');
const source = (v: number) =>
  `const TABLE = [\n${table}\n];\nexport const echoSchema = { type: 'object', properties: { text: { type: 'string' } } };\nexport function echo(args) { return \`v${v}:\${args.text}:\${TABLE.length}\`; }\n`;
const parsed = parseToolRef('js:tool.mjs#echo');
if (!('kind' in parsed) || parsed.kind !== 'js') throw new Error('not a js: reference');
const ref = parsed;
const guard = new PathGuard([]).withRoot(dir);
// Each call stands for a new run (its own run state), as edits between runs are: a run re-checks its
// js: modules only once a second.
const scope = () => ({ guard, hatchery: { dir }, shared: {} }) as unknown as Scope;
const js = new JsTools();
const signal = new AbortController().signal;
let notices = 0;
js.onNotice = () => {
  notices++;
};

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const measure = () => {
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
};

writeFileSync(file, source(0));
await (await js.resolve(ref, scope())).call({ text: 'a' }, { signal } as never);
const before = measure();
let last = '';
for (let i = 1; i <= EDITS; i++) {
  writeFileSync(file, source(i));
  // A distinct modification time per edit, as edits seconds apart would have.
  const t = new Date(Date.now() + i * 1000);
  utimesSync(file, t, t);
  last = (await (await js.resolve(ref, scope())).call({ text: 'a' }, { signal } as never)).text;
}
const after = measure();
console.log(
  `${EDITS} edits of a ${Math.round(source(0).length / 1024)} KB module; last call answered "${last}"`,
);
console.log(`rss  ${mb(before.rss)} -> ${mb(after.rss)} (+${mb(after.rss - before.rss)})`);
console.log(`heap ${mb(before.heap)} -> ${mb(after.heap)} (+${mb(after.heap - before.heap)})`);
console.log(`reload refusals reported: ${notices}`);
rmSync(dir, { recursive: true, force: true });
