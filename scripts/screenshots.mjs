// Writes docs/images/studio.png (the README's picture of the studio: a run drawn on its graph, with its
// timeline) by running the studio's browser test with HATCHERY_README_SHOT set. Needs Debian's chromium
// (apt-get install chromium) and a build (npm run build). Usage: node scripts/screenshots.mjs
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = fileURLToPath(new URL('../docs/images/studio.png', import.meta.url));
const res = spawnSync('npx', ['vitest', 'run', 'test/studio/page.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, HATCHERY_README_SHOT: out },
});
if (res.status !== 0) process.exit(res.status ?? 1);
process.stdout.write(`wrote ${out} (${Math.round(statSync(out).size / 1024)} KiB)\n`);
