import path from 'node:path';
import { isInside, realish } from '../core/fs/safe-fs.js';
import { WritePolicy } from '../core/fs/write-policy.js';
import type { LoadRoots } from '../engine/contracts.js';
import { hasTemplateTags } from '../engine/templates/templates.js';

export type { LoadRoots } from '../engine/contracts.js';

/**
 * The roots a Runtime with these options confines its runs to (read roots besides each file's own
 * folder, and write roots), for LoadOptions.roots of a load that runs nothing (`validate`).
 */
export function runtimeRoots(
  o: { cwd?: string; allowRoots?: readonly string[]; allowWrite?: readonly string[] } = {},
): LoadRoots {
  const policy = new WritePolicy({ cwd: o.cwd, allowRoots: o.allowRoots, allowWrite: o.allowWrite });
  return {
    read: policy.roots,
    write: policy.roots,
    writeProblem: (p, abs, dir) => policy.loadWriteProblem(p, abs, dir),
  };
}

/** The run-time guard's rule: the real location (links followed) must be inside a root's real location. */
export function insideRoots(abs: string, roots: readonly string[]): boolean {
  const real = realish(abs);
  return roots.some((r) => isInside(real, realish(path.resolve(r))));
}

/**
 * Why a constant `files` path (relative to `dir`) cannot be read by a run, or undefined. Templated
 * paths are left to the run-time guard, which stays the real defence.
 */
export function readPathProblem(p: string, dir: string, roots: LoadRoots): string | undefined {
  if (hasTemplateTags(p)) return undefined;
  const abs = path.resolve(dir, p);
  const allowed = [...new Set([dir, ...roots.read])];
  if (insideRoots(abs, allowed)) return undefined;
  return `"${p}" (${abs}) is outside the folders runs may read (${allowed.join(', ')}); move the file below one of them, or allow its folder with --allow-root DIR`;
}

/**
 * Why a constant path to write (`write_output`, a write_file baneling's `path`; relative to `dir`)
 * cannot be written by a run, or undefined: the runtime's whole rule when the roots carry it.
 */
export function writePathProblem(p: string, dir: string, roots: LoadRoots): string | undefined {
  if (hasTemplateTags(p)) return undefined;
  const abs = path.resolve(dir, p);
  if (roots.writeProblem) return roots.writeProblem(p, abs, dir);
  if (insideRoots(abs, roots.write)) return undefined;
  const where = roots.write.length
    ? `the folders runs may write (${roots.write.join(', ')})`
    : 'every folder runs may write (there is none: the working folder is / or the home folder)';
  return `"${p}" (${abs}) is outside ${where}; write below one of them, or allow a folder with --allow-write DIR`;
}
