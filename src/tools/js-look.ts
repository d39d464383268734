import { type BigIntStats, realpathSync, statSync } from 'node:fs';
import type { RunContext } from '../engine/contracts.js';

/**
 * A run's look at a js: module file, made once per run (JsTools.look): is its real path still inside
 * the roots, and is it still the content imported? Each run must look again (an edit, or a link
 * swapped to point elsewhere, is seen by the next run), and at a fan-out of 100 branches the look was
 * a tenth of each branch's cost: the guard's check walks up with existsSync and resolves links one
 * path component at a time in JavaScript (~13 µs).
 *
 * The look here is one stat when nothing changed: the file the path leads to is the very file (same
 * device and inode) found inside the roots by the last full check, with the same size, modification
 * and status-change times. Any other file there (a link or a folder of the path swapped to lead
 * elsewhere, a file replaced) has another inode; an edit changes the times; making or removing a
 * hard link to the file changes its status-change time (ctime, which no user can set back). So the
 * content imported is the content checked inside the roots. Anything else takes the full check.
 */
type Guard = RunContext['guard'];

/** What a full check found: the file's identity, inside the roots of `guard`. */
export interface CheckedFile {
  readonly guard: Guard;
  /** Modification time and size, the key of the module's imported versions. */
  readonly stamp: string;
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

/**
 * The stamp a module's versions are kept by: a new one means the file is read and hashed again. The
 * status-change time and the inode catch an edit that kept the size and set the modification time
 * back, or a file replaced by another.
 */
export function stampOf(info: BigIntStats): string {
  return `${info.mtimeNs}-${info.ctimeNs}-${info.size}-${info.ino}`;
}

/** The file's stamp when it is still the file `last` checked for this guard, else undefined (check again). */
export function unchanged(abs: string, last: CheckedFile | undefined, guard: Guard): string | undefined {
  if (last === undefined || last.guard !== guard) return undefined;
  const info = statSync(abs, { bigint: true, throwIfNoEntry: false });
  if (
    info === undefined ||
    info.ino !== last.ino ||
    info.dev !== last.dev ||
    info.ctimeNs !== last.ctimeNs ||
    info.mtimeNs !== last.mtimeNs ||
    info.size !== last.size
  )
    return undefined;
  return last.stamp;
}

/**
 * The full check in two system calls (the C library's realpath, then a stat of the real file): its
 * real path inside the guard's roots, and what it is. Undefined when anything is off (missing,
 * denied, unreadable): the guard's own check then gives the error, as before.
 */
export function checkFile(abs: string, guard: Guard): CheckedFile | undefined {
  let real: string;
  try {
    real = realpathSync.native(abs);
  } catch {
    return undefined;
  }
  if (!guard.allowsReal(real)) return undefined;
  const info = statSync(real, { bigint: true, throwIfNoEntry: false });
  if (info === undefined) return undefined;
  const { dev, ino, size, mtimeNs, ctimeNs } = info;
  return { guard, stamp: stampOf(info), dev, ino, size, mtimeNs, ctimeNs };
}
