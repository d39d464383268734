import { loadHatcheryText } from '../dist/loader/load.js';
import { hatcheryTool } from '../dist/mcp/tool-defs.js';
const n = Number(process.argv[2]);
const blocks = n / 5; const list = [];
for (let k = 0; k < blocks; k++) {
  const prev = k === 0 ? '{{ ctx.input }}' : `{{ ctx.s${k - 1} }} {{ out.C${k - 1} | default("") }}`;
  list.push({ name: `P${k}`, type: 'parallel', branches: [`A${k}`, `B${k}`], next: `C${k}` },
    { name: `A${k}`, sys_prompt: 'You check facts.', usr_prompt: `Check: ${prev}` },
    { name: `B${k}`, usr_prompt: `Rewrite {{ ctx.input }} given ${prev}` },
    { name: `C${k}`, usr_prompt: `Merge {{ out.P${k} }} for {{ ctx.input }}`, save_output: `s${k}`, next: `D${k}` },
    { name: `D${k}`, usr_prompt: `{% if ctx.s${k} %}{{ ctx.s${k} | upper }}{% endif %} {{ out.C${k} }}`, ...(k + 1 < blocks ? { next: `P${k + 1}` } : {}) });
}
const text = JSON.stringify({ name: 'c', desc: 'd', model: 'openai:gpt-4o-mini', nodes: list });
for (let r = 0; r < 3; r++) {
  const t0 = performance.now();
  const res = loadHatcheryText(text, '/tmp/c.json');
  if (!res.ok) throw res.error;
  hatcheryTool(res.hatchery);
  console.log(n, (performance.now() - t0).toFixed(0), 'ms');
}
