// Time from saving a hatchery file to the client receiving notifications/tools/list_changed, over
// stdio against the built CLI. Includes the server's debounce (100 ms by default), which lets
// editors finish writing before the file is read.
// Usage: npm run build && node --import tsx bench/reload-latency.ts [--saves N]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { median } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;
const argSaves = process.argv.indexOf('--saves');
// BENCH_SMOKE=1 (CI's smoke step): three saves.
const SAVES = argSaves > 0 ? Number(process.argv[argSaves + 1]) : process.env.BENCH_SMOKE === '1' ? 3 : 30;

const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-reload-'));
const file = path.join(dir, 'edited.json');
const def = (i: number) =>
  JSON.stringify({
    name: 'edited',
    desc: `version ${i}`,
    nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: `v${i} {{ ctx.input }}` } }],
  });
writeFileSync(file, def(0));

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, 'dist/cli.js'), '--dir', dir],
  cwd: root,
  stderr: 'ignore',
});
const client = new Client({ name: 'bench', version: '1.0.0' });
let notified: ((t: number) => void) | undefined;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified?.(performance.now()));
await client.connect(transport);

const latencies: number[] = [];
for (let i = 1; i <= SAVES; i++) {
  const got = new Promise<number>((resolve) => {
    notified = resolve;
  });
  const t0 = performance.now();
  writeFileSync(file, def(i));
  let timer: NodeJS.Timeout | undefined;
  const t1 = await Promise.race([
    got,
    new Promise<number>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no list_changed for save ${i}`)), 10_000);
    }),
  ]);
  clearTimeout(timer);
  latencies.push(t1 - t0);
  const { tools } = await client.listTools();
  if (tools.find((t) => t.name === 'edited')?.description !== `version ${i}`)
    throw new Error('stale tool list');
  // Past chokidar's 50 ms per-file event throttle, so every save is a separate change.
  await new Promise((r) => setTimeout(r, 80));
}
await client.close();
rmSync(dir, { recursive: true, force: true });

const ms = (x: number) => `${x.toFixed(1)} ms`;
const sorted = [...latencies].sort((a, b) => a - b);
console.log(`save -> notifications/tools/list_changed over stdio, ${SAVES} saves (debounce 100 ms included)`);
console.log(
  `  median ${ms(median(latencies))}   min ${ms(sorted[0]!)}   max ${ms(sorted[sorted.length - 1]!)}`,
);
