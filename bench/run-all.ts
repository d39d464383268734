// Runs every benchmark in this folder, one after the other, so their figures come from one session.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const here = new URL('.', import.meta.url);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run-all.ts')
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', new URL(f, here).pathname], {
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
