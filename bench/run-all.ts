// Runs every benchmark in this folder, one after the other, so their figures come from one session.
// Usage: node --import tsx bench/run-all.ts [--smoke] [name ...]
//   --smoke   BENCH_SMOKE=1 for each benchmark: smallest sizes, fewest rounds. CI runs this after the
//             tests, so every benchmark must still complete; nobody reads its figures there.
//   name ...  only the benchmarks whose file name contains one of these words (e.g. `fanout cold`).
// Exits non-zero when a benchmark fails or (smoke) runs over its time limit; never because a target
// is missed: the figures are for people, and these machines are too noisy to gate on them.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';

const here = new URL('.', import.meta.url);
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const words = args.filter((a) => !a.startsWith('--'));
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run-all.ts')
  .filter((f) => words.length === 0 || words.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no benchmark matches ${words.join(', ')}`);
  process.exit(2);
}
// A smoke run that hangs must fail CI, not stall it.
const LIMIT_MS = smoke ? 180_000 : 30 * 60_000;

/** Runs one benchmark with its output passed through; resolves to a failure reason or undefined. */
function runOne(file: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', new URL(file, here).pathname], {
      stdio: 'inherit',
      env: smoke ? { ...process.env, BENCH_SMOKE: '1' } : process.env,
      detached: process.platform !== 'win32',
    });
    const timer = setTimeout(() => {
      // The benchmark's own servers and clients are in its process group: end them all.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      resolve(`over its ${LIMIT_MS / 1000} s limit`);
    }, LIMIT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve(err.message);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : `exit ${code ?? signal}`);
    });
  });
}

const failed: string[] = [];
const started = performance.now();
for (const f of files) {
  console.log(`\n=== ${f}${smoke ? ' (smoke)' : ''}`);
  const t0 = performance.now();
  const why = await runOne(f);
  const s = ((performance.now() - t0) / 1000).toFixed(1);
  if (why) {
    failed.push(`${f}: ${why}`);
    console.log(`=== ${f} FAILED after ${s} s: ${why}`);
  } else console.log(`=== ${f} done in ${s} s`);
}
const total = ((performance.now() - started) / 1000).toFixed(1);
if (failed.length) {
  console.error(
    `\n${failed.length} of ${files.length} benchmarks failed (${total} s):\n  ${failed.join('\n  ')}`,
  );
  process.exitCode = 1;
} else console.log(`\nall ${files.length} benchmarks completed in ${total} s`);
