/**
 * Vitest global setup: many tests run the built CLI, so dist/ must match src/. `npm test` builds first
 * (then this only compares times); a bare `npx vitest run` on a fresh clone or after an edit builds
 * here, once, instead of failing in two dozen places.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

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

function builtAt(): number | undefined {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Builds dist/ when it is missing or older than src/; one clear line when that build fails. */
export default function setup(): void {
  const built = builtAt();
  if (built !== undefined && built >= newestMtime(path.join(ROOT, 'src'))) return;
  try {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    const out = `${(err as { stdout?: Buffer }).stdout ?? ''}`.split('\n').find((l) => /error/i.test(l));
    const error = new Error(
      `dist/ is ${built === undefined ? 'missing' : 'older than src/'} and building it failed; run \`npm run build\` and fix what it reports${out ? ` (first error: ${out.trim()})` : ''}`,
    );
    // The message says it all; a stack into this file would only bury it.
    error.stack = `Error: ${error.message}`;
    throw error;
  }
}
