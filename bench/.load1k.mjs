import { readdirSync, readFileSync } from 'node:fs';
const dir = process.argv[2];
const t0 = performance.now();
const { loadHatcheryText } = await import('../dist/loader/load.js');
const { hatcheryTool } = await import('../dist/mcp/tool-defs.js');
const t1 = performance.now();
const files = readdirSync(dir).map((f) => [dir + '/' + f, readFileSync(dir + '/' + f, 'utf8')]);
const t2 = performance.now();
let ok = 0;
for (const [f, text] of files) { const r = loadHatcheryText(text, f); if (r.ok) { ok++; hatcheryTool(r.hatchery); } else console.log(r.error.message); }
const t3 = performance.now();
console.log(`import ${(t1 - t0).toFixed(0)} read ${(t2 - t1).toFixed(0)} load ${(t3 - t2).toFixed(0)} ms for ${ok} (${((t3 - t2) / files.length * 1000).toFixed(0)} µs/file)`);
