import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

// Every file access of a run goes through here: open first, then check where the opened file really
// is, then read or write through that same descriptor. A path checked before it is opened can be
// swapped for a symlink in between (time of check, time of use); a descriptor cannot.

/** Refuses a final-component symlink on open (0 where the platform has no such flag). */
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** Opening a FIFO must not hang a run: with O_NONBLOCK it opens at once and fails the regular-file test. */
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
/** Linux names the file behind every descriptor in /proc/self/fd. */
const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/** Decides whether a real path may be used; throws (a PATH_DENIED HatcheryError) when not. */
export type RealPathCheck = (real: string) => void;

/** An errno-style error, so callers describe it like any other I/O failure. */
function errno(code: string, message: string): NodeJS.ErrnoException {
  const e = new Error(message) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/**
 * The kernel's name of an open file: already canonical (no symlinks, no `..`). A file replaced or
 * removed since it was opened reads as "<path> (deleted)"; only the last component carries the
 * suffix, so dropping it never changes the folder the file is in.
 */
function procPath(link: string): string {
  return link.endsWith(' (deleted)') ? link.slice(0, -' (deleted)'.length) : link;
}

/** Real path of an open descriptor: /proc on Linux, else the path's realpath if it is the same file. */
function fdRealpathSync(fd: number, opened: string): string {
  if (PROC_FD) return procPath(readlinkSync(`/proc/self/fd/${fd}`));
  const real = realpathSync.native(opened);
  const a = fstatSync(fd);
  const b = statSync(real);
  if (a.dev !== b.dev || a.ino !== b.ino) throw errno('ESTALE', 'the file changed while it was opened');
  return real;
}

async function fdRealpath(fh: FileHandle, opened: string): Promise<string> {
  if (PROC_FD) return procPath(await readlink(`/proc/self/fd/${fh.fd}`));
  const real = await realpath(opened);
  const [a, b] = await Promise.all([fh.stat(), stat(real)]);
  if (a.dev !== b.dev || a.ino !== b.ino) throw errno('ESTALE', 'the file changed while it was opened');
  return real;
}

/** Resolves the real path of `p`, following symlinks of its nearest existing ancestor. */
export function realish(p: string): string {
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

/** True when the absolute path `p` is `dir` or below it. */
export function isInside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}

/** Options of a checked read. */
export interface ReadOptions {
  /** Largest size read; a bigger file makes `tooBig(size)` the error. */
  maxBytes?: number;
  tooBig?: (size: number) => Error;
  signal?: AbortSignal;
}

function checkOpened(
  info: { isFile(): boolean; isDirectory(): boolean; size: number },
  o: ReadOptions,
): void {
  if (info.isDirectory()) throw errno('EISDIR', 'is a folder');
  if (!info.isFile()) throw errno('EINVAL', 'not a regular file');
  if (o.maxBytes !== undefined && info.size > o.maxBytes) {
    throw o.tooBig?.(info.size) ?? errno('EFBIG', `${info.size} bytes, over the limit`);
  }
}

/** Reads a UTF-8 file after checking the real path of the opened file, so a swapped-in symlink cannot leak. */
export async function readTextChecked(
  abs: string,
  check: RealPathCheck,
  o: ReadOptions = {},
): Promise<string> {
  const fh = await open(abs, constants.O_RDONLY | O_NONBLOCK);
  try {
    check(await fdRealpath(fh, abs));
    checkOpened(await fh.stat(), o);
    return await fh.readFile({ encoding: 'utf8', signal: o.signal });
  } finally {
    await fh.close();
  }
}

/** The synchronous twin of readTextChecked (fread runs inside template rendering, which is synchronous). */
export function readTextCheckedSync(abs: string, check: RealPathCheck, o: ReadOptions = {}): string {
  const fd = openSync(abs, constants.O_RDONLY | O_NONBLOCK);
  try {
    check(fdRealpathSync(fd, abs));
    const info = fstatSync(fd);
    checkOpened(info, o);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.max(64 * 1024, Math.min(info.size + 1, 16 * 1024 * 1024)));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      // A file that grows while it is read is held to the same limit as its size was.
      if (o.maxBytes !== undefined && total > o.maxBytes) {
        throw o.tooBig?.(total) ?? errno('EFBIG', `${total} bytes, over the limit`);
      }
      chunks.push(n === buf.length ? buf : buf.subarray(0, n));
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates the folders of `dir` one level at a time, checking the real path of every existing ancestor
 * and every folder made, so a symlinked folder on the way cannot make folders appear outside.
 */
export async function mkdirChecked(dir: string, check: RealPathCheck): Promise<void> {
  const missing: string[] = [];
  let current = dir;
  for (;;) {
    try {
      const real = await realpath(current);
      check(real);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const parent = path.dirname(current);
      if (parent === current) throw err;
      missing.unshift(path.basename(current));
      current = parent;
    }
  }
  for (const name of missing) {
    current = path.join(current, name);
    try {
      await mkdir(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    check(await realpath(current));
  }
}

/** Options of a checked write. */
export interface WriteOptions {
  append?: boolean;
}

/**
 * Writes (or appends) UTF-8 text to `abs` without ever following a symlink: the real path of the
 * parent folder is checked (`checkDir`) and the file is opened with O_NOFOLLOW, then the opened file's
 * real path is checked (`checkFile`) before a byte is written; a file this call created in a place that
 * fails the check is removed again.
 */
export async function writeTextChecked(
  abs: string,
  content: string,
  checkDir: RealPathCheck,
  checkFile: RealPathCheck,
  o: WriteOptions = {},
): Promise<void> {
  const dir = path.dirname(abs);
  await mkdirChecked(dir, checkDir);
  const realDir = await realpath(dir);
  checkDir(realDir);
  const target = path.join(realDir, path.basename(abs));
  checkFile(target);
  const base = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | (o.append ? constants.O_APPEND : 0);
  const { fh, created } = await openForWrite(target, base);
  try {
    const real = await fdRealpath(fh, target);
    try {
      checkFile(real);
    } catch (err) {
      if (created) await unlink(real).catch(() => undefined);
      throw err;
    }
    const info = await fh.stat();
    if (!info.isFile()) throw errno('EINVAL', 'not a regular file');
    if (!o.append) await fh.truncate(0);
    // One write() of the whole text: with O_APPEND the kernel puts it at the end in one piece, so
    // concurrent appends never interleave within a line. A short write (a full disk) goes on after it.
    const bytes = Buffer.from(content, 'utf8');
    for (let done = 0; done < bytes.length; ) {
      done += (await fh.write(bytes, done, bytes.length - done)).bytesWritten;
    }
  } finally {
    await fh.close();
  }
}

/** Tries of the open-or-create race (another writer creating or removing the file in between). */
const OPEN_TRIES = 3;

/**
 * Opens an existing file, or creates it with O_EXCL (which refuses any symlink there, dangling ones
 * included). EEXIST means either a symlink or a file another writer created first: lstat tells them
 * apart, and the latter is opened again without O_CREAT, still with O_NOFOLLOW.
 */
async function openForWrite(target: string, flags: number): Promise<{ fh: FileHandle; created: boolean }> {
  for (let tries = 1; ; tries++) {
    try {
      return { fh: await open(target, flags), created: false };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw symlinkAware(err);
    }
    try {
      return { fh: await open(target, flags | constants.O_CREAT | constants.O_EXCL, 0o666), created: true };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw symlinkAware(err);
      const info = await lstat(target).catch(() => undefined);
      if (info?.isSymbolicLink()) throw symlinkAware(err);
      if (tries >= OPEN_TRIES) throw err;
    }
  }
}

/** ELOOP from O_NOFOLLOW (EMLINK on some BSDs), or EEXIST from O_EXCL on a link: "a symlink is in the way". */
function symlinkAware(err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'EEXIST' || code === 'EMLINK') {
    return errno('ELOOP', 'the path is a symbolic link; links are never written through');
  }
  return err;
}

/**
 * Opens a folder and returns the real path behind the descriptor and a path that reaches exactly that
 * folder (on Linux /proc/self/fd/N, immune to a later swap); `close` releases it.
 */
export function openDirChecked(
  abs: string,
  check: RealPathCheck,
  noFollow = false,
): { real: string; via: string; close: () => void } {
  const fd = openSync(abs, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (noFollow ? O_NOFOLLOW : 0));
  try {
    const real = fdRealpathSync(fd, abs);
    check(real);
    return { real, via: PROC_FD ? `/proc/self/fd/${fd}` : real, close: () => closeSync(fd) };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Why a file could not be read, in words: "no such file", "it is a folder", else the error code. */
export function readFailure(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code === 'ENOENT'
    ? 'no such file'
    : e.code === 'EISDIR'
      ? 'it is a folder'
      : (e.code ?? (e as Error).message ?? String(err));
}
