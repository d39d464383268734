/**
 * Vitest global setup: many tests run the built CLI, so dist/ must match src/. `npm test` builds first
 * (then this only compares times); a bare `npx vitest run` on a fresh clone or after an edit builds
 * here, once, instead of failing in two dozen places. It also compiles the fixture MCP servers to
 * JavaScript: the tests start them a few dozen times, and plain node starts them in half the time tsx
 * needs. The tests' temporary folders go into one folder per test run, removed at its end: every test
 * making its own under the system's temp folder left a few thousand entries there per run, and a temp
 * folder of 200,000 entries made creating any file in it (a run's journal) up to ten times slower.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES_JS } from './fixtures/paths.js';

const ROOT = new URL('..', import.meta.url).pathname;
/** Written by scripts/postbuild.mjs at the end of every `npm run build`. */
const STAMP = path.join(ROOT, 'dist', '.built');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(path.join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/** Modification time of a file, 0 when it does not exist. */
function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Writes test/fixtures/*-server.ts as JavaScript to FIXTURES_JS (below the repository, for node_modules). */
async function compileFixtures(): Promise<void> {
  const dir = path.join(ROOT, 'test', 'fixtures');
  const stale = readdirSync(dir)
    .filter((f) => f.endsWith('-server.ts'))
    .filter((f) => mtimeOf(path.join(FIXTURES_JS, f.replace(/\.ts$/, '.mjs'))) < mtimeOf(path.join(dir, f)));
  if (stale.length === 0) return;
  const ts = (await import('typescript')).default;
  mkdirSync(FIXTURES_JS, { recursive: true });
  for (const f of stale) {
    const out = ts.transpileModule(readFileSync(path.join(dir, f), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: f,
    });
    writeFileSync(path.join(FIXTURES_JS, f.replace(/\.ts$/, '.mjs')), out.outputText);
  }
}

/**
 * Points TMPDIR at a folder of this test run (the workers and the programs the tests start inherit it,
 * so os.tmpdir() is that folder everywhere) and returns the teardown that removes it.
 */
function ownTempFolder(): () => void {
  const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-tests-'));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * Builds dist/ when it is missing or older than src/ (one clear line when that fails); compiles
 * fixtures; gives the run its own temp folder, and returns its removal as the teardown.
 */
export default async function setup(): Promise<() => void> {
  const removeTemp = ownTempFolder();
  await compileFixtures();
  const built = mtimeOf(STAMP);
  if (built > 0 && built >= newestMtime(path.join(ROOT, 'src'))) return removeTemp;
  try {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    const out = `${(err as { stdout?: Buffer }).stdout ?? ''}`.split('\n').find((l) => /error/i.test(l));
    const error = new Error(
      `dist/ is ${built === 0 ? 'missing' : 'older than src/'} and building it failed; run \`npm run build\` and fix what it reports${out ? ` (first error: ${out.trim()})` : ''}`,
    );
    // The message says it all; a stack into this file would only bury it.
    error.stack = `Error: ${error.message}`;
    removeTemp();
    throw error;
  }
  return removeTemp;
}
