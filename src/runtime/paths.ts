import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { type ErrorContext, HatcheryError } from '../errors.js';

/** Resolves the real path of `p`, following symlinks of its nearest existing ancestor. */
function realish(p: string): string {
  let current = p;
  const rest: string[] = [];
  // Walk up until something exists; a file about to be written has no realpath yet.
  while (!existsSync(current)) {
    const parent = path.dirname(current);
    if (parent === current) break;
    rest.unshift(path.basename(current));
    current = parent;
  }
  let real: string;
  try {
    real = realpathSync(current);
  } catch {
    real = current;
  }
  return rest.length ? path.join(real, ...rest) : real;
}

/** Confines file access to a set of root folders; `..` and symlinks that leave them are refused. */
export class PathGuard {
  readonly roots: readonly string[];
  private readonly realRoots: string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map((r) => path.resolve(r));
    this.realRoots = this.roots.map(realish);
  }

  /** A guard with one more root in front (the folder of the hatchery being run). */
  withRoot(root: string): PathGuard {
    const abs = path.resolve(root);
    if (this.roots.includes(abs)) return this;
    return new PathGuard([abs, ...this.roots]);
  }

  /** True when the real location of `abs` is inside a root. */
  allows(abs: string): boolean {
    const real = realish(abs);
    return this.realRoots.some(
      (root) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep),
    );
  }

  /** Resolves `p` against `base` and returns the absolute path, or throws PATH_DENIED naming it. */
  resolve(base: string, p: string, where: ErrorContext = {}): string {
    if (typeof p !== 'string' || p.length === 0) {
      throw new HatcheryError('PATH_DENIED', 'empty path', where);
    }
    if (p.includes('\0'))
      throw new HatcheryError('PATH_DENIED', `path ${JSON.stringify(p)} contains a NUL byte`, where);
    const abs = path.resolve(base, p);
    if (!this.allows(abs)) {
      throw new HatcheryError(
        'PATH_DENIED',
        `path "${p}" (${abs}) is outside the allowed roots (${this.roots.join(', ')}); move the file under a root or allow its folder with --allow-root DIR`,
        { ...where, path: p },
      );
    }
    return abs;
  }
}
