import path from 'node:path';
import { isInside, realish } from '../core/fs/safe-fs.js';
import { WritePolicy } from '../core/fs/write-policy.js';
import { hasTemplateTags } from '../engine/templates/templates.js';

/** The read and write roots constant paths are checked against at load time. */
export interface LoadRoots {
  read: readonly string[];
  write: readonly string[];
}

/**
 * The roots a Runtime with these options confines its runs to (read roots besides each file's own
 * folder, and write roots), for LoadOptions.roots of a load that runs nothing (`validate`).
 */
export function runtimeRoots(
  o: { cwd?: string; allowRoots?: readonly string[]; allowWrite?: readonly string[] } = {},
): LoadRoots {
  const roots = new WritePolicy({ cwd: o.cwd, allowRoots: o.allowRoots, allowWrite: o.allowWrite }).roots;
  return { read: roots, write: roots };
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

/** Why a constant `write_output` path (relative to `dir`) cannot be written by a run, or undefined. */
export function writePathProblem(p: string, dir: string, roots: LoadRoots): string | undefined {
  if (hasTemplateTags(p)) return undefined;
  const abs = path.resolve(dir, p);
  if (insideRoots(abs, roots.write)) return undefined;
  const where = roots.write.length
    ? `the folders runs may write (${roots.write.join(', ')})`
    : 'every folder runs may write (there is none: the working folder is / or the home folder)';
  return `"${p}" (${abs}) is outside ${where}; write below one of them, or allow a folder with --allow-write DIR`;
}
