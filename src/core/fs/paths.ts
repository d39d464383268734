import path from 'node:path';
import { type ErrorContext, HatcheryError } from '../errors.js';
import {
  isInside,
  type ReadOptions,
  type RealPathCheck,
  readTextChecked,
  readTextCheckedSync,
  realish,
  type WriteOptions,
  writeTextChecked,
} from './safe-fs.js';
import { WritePolicy } from './write-policy.js';

/**
 * Confines file access. Reads: below the read roots (the hatchery's own folder, --allow-root folders
 * and the write roots). Writes: the shared WritePolicy (write roots minus protected folders and
 * hatchery files). `..` and symlinks that leave them are refused, and every open is checked on the
 * opened file itself, so a path swapped for a symlink mid-call cannot leak or plant anything.
 */
export class PathGuard {
  readonly roots: readonly string[];
  private readonly realRoots: string[];

  constructor(
    roots: readonly string[],
    /** Where runs may write; shared by every guard of one Runtime. */
    readonly policy: WritePolicy = new WritePolicy(),
  ) {
    this.roots = roots.map((r) => path.resolve(r));
    this.realRoots = this.roots.map(realish);
  }

  /** A guard with one more read root in front (the folder of the hatchery being run). */
  withRoot(root: string): PathGuard {
    const abs = path.resolve(root);
    if (this.roots.includes(abs)) return this;
    return new PathGuard([abs, ...this.roots], this.policy);
  }

  /** True when the real location of `abs` is inside a read root (`real`: that location, when already known). */
  allows(abs: string, real = realish(abs)): boolean {
    return this.realRoots.some((root) => isInside(real, root));
  }

  private denied(p: string, abs: string, where: ErrorContext): HatcheryError {
    return new HatcheryError(
      'PATH_DENIED',
      `path "${p}" (${abs}) is outside the allowed roots (${this.roots.join(', ')}); move the file under a root or allow its folder with --allow-root DIR`,
      { ...where, path: p },
    );
  }

  /** Resolves `p` against `base` and returns the absolute path, or throws PATH_DENIED naming it. */
  resolve(base: string, p: string, where: ErrorContext = {}): string {
    const abs = absolute(base, p, where);
    if (!this.allows(abs)) throw this.denied(p, abs, where);
    return abs;
  }

  /** Reads a text file below the read roots; the opened file's real path is what gets checked. */
  readText(base: string, p: string, where: ErrorContext, o: ReadOptions = {}): Promise<string> {
    const abs = this.resolve(base, p, where);
    return readTextChecked(abs, this.readCheck(p, abs, where), o);
  }

  /** The synchronous twin of readText (fread). */
  readTextSync(base: string, p: string, where: ErrorContext, o: ReadOptions = {}): string {
    const abs = this.resolve(base, p, where);
    return readTextCheckedSync(abs, this.readCheck(p, abs, where), o);
  }

  /** A check of an opened file's real path against the read roots, for callers that open it themselves. */
  readCheck(p: string, abs: string, where: ErrorContext): RealPathCheck {
    return (real) => {
      if (!this.allows(abs, real)) throw this.denied(p, `${abs} -> ${real}`, where);
    };
  }

  /**
   * Writes (or appends) text to `p`, creating folders: checked before, on every folder made and on
   * the opened file; a symlink as the last component is never followed, dangling or not.
   */
  async writeText(
    base: string,
    p: string,
    content: string,
    where: ErrorContext,
    o: WriteOptions = {},
  ): Promise<void> {
    const policy = this.policy;
    // The import graphs of js: modules are found asynchronously: a write waits until they are known.
    const walking = policy.settled();
    if (walking !== undefined) await walking;
    const abs = absolute(base, p, where);
    policy.checkWrite(realish(abs), p, abs, where);
    try {
      await writeTextChecked(
        abs,
        content,
        (real) => policy.checkFolder(real, p, abs, where),
        (real) => policy.checkWrite(real, p, abs, where),
        o,
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw err;
      throw new HatcheryError(
        'PATH_DENIED',
        `cannot write "${p}" (${abs}): it is a symbolic link, and runs never write through links (a dangling one could create a file outside the write roots); write to the real file's path`,
        { ...where, path: p },
        { cause: err },
      );
    }
  }

  /**
   * Where a program of a hatchery file in `base` starts when its node names no folder: the folder the
   * user works in (where the command was started), else `base` (a server started from / or the home
   * folder, as desktop clients start it). A folder to start in, never one runs may write: a script is
   * the file author's own program, and finds relative files where the user does.
   */
  startDir(base: string): string {
    return this.policy.defaultRoot ?? base;
  }

  /**
   * The working folder of a program: `p` (relative to `base`) when given, which must be a write root
   * or below one and not protected; otherwise `base` if runs may write there, else a default write root.
   */
  workDir(base: string, p: string | undefined, where: ErrorContext = {}): string {
    if (p === undefined) return this.policy.defaultWorkDir(base);
    const abs = absolute(base, p, where);
    this.policy.checkWorkDir(realish(abs), p, abs, where);
    return abs;
  }
}

/** `p` resolved against `base`; empty paths and NUL bytes are refused. */
function absolute(base: string, p: string, where: ErrorContext): string {
  if (typeof p !== 'string' || p.length === 0) {
    throw new HatcheryError('PATH_DENIED', 'empty path', where);
  }
  if (p.includes('\0'))
    throw new HatcheryError('PATH_DENIED', `path ${JSON.stringify(p)} contains a NUL byte`, where);
  return path.resolve(base, p);
}
