/**
 * How a journal writes its file: the text of each flush is appended in order, one fs.write at a time
 * (libuv's pool: the event loop never waits for the disk), through a descriptor kept open for the run.
 * Past a cap of open files a write opens and closes the file itself (fs.appendFile), so thousands of
 * runs in flight never use up the process's descriptors.
 */
import { appendFile, close, open, readFileSync, write } from 'node:fs';
import type { JournalSink } from './line-journal.js';

/**
 * Journal files kept open at most: a quarter of the process's limit where it can be read (Linux; Node
 * raises the soft limit to the hard one at start), between 256 and 4,096.
 */
let maxOpenFiles: number | undefined;
let openFiles = 0;

/** The cap on journal files kept open (see maxOpenFiles). */
export function openFilesCap(): number {
  if (maxOpenFiles !== undefined) return maxOpenFiles;
  maxOpenFiles = 256;
  if (process.platform === 'linux') {
    try {
      const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
      const limit = m === null ? 0 : m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1]);
      maxOpenFiles = Math.max(256, Math.min(4096, Math.floor(limit / 4)));
    } catch {
      // No /proc: the default.
    }
  }
  return maxOpenFiles;
}

/** Sets the cap on journal files kept open (tests of the fallback past it); undefined: the default. */
export function setOpenFilesCap(cap: number | undefined): void {
  maxOpenFiles = cap;
}

/** The file of one journal: text handed to it is appended in order, one write in flight at a time. */
export class JournalFile implements JournalSink {
  /** The descriptor, open for appending from the first write to close(). */
  private fd: number | undefined;
  /** Text handed over while a write was in flight: the next write takes all of it. */
  private pending = '';
  /** A write, open or close is in flight. */
  private busy = false;
  /** close() was called: the descriptor is closed once everything is written. */
  private closing = false;
  /** Who waits for everything handed over so far to be written (see idle). */
  private waiters: (() => void)[] = [];

  constructor(
    readonly path: string,
    /** Told of each failed write (its text is lost; the next writes are tried). */
    private readonly failed: (err: unknown) => void,
  ) {}

  /** Appends `text` after everything handed over before. */
  write(text: string): void {
    this.pending += text;
    if (!this.busy) this.next();
  }

  /** Closes the file once everything handed over is written (the run's status is in its last line). */
  close(): void {
    this.closing = true;
    if (!this.busy) this.next();
  }

  /** Resolves once everything handed over so far is written (or failed). */
  idle(): Promise<void> {
    if (!this.busy && this.pending === '') return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Starts the next write (or the close), or tells the waiters that nothing is left. */
  private next(): void {
    if (this.pending === '') {
      if (this.closing && this.fd !== undefined) {
        const fd = this.fd;
        this.fd = undefined;
        openFiles--;
        this.busy = true;
        // Nothing is lost to a failed close: every write before it completed.
        close(fd, () => this.done(null));
        return;
      }
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
      return;
    }
    const text = this.pending;
    this.pending = '';
    this.busy = true;
    if (this.fd !== undefined) {
      writeAll(this.fd, text, (err) => this.done(err));
    } else if (!this.closing && openFiles < openFilesCap()) {
      openFiles++;
      open(this.path, 'a', 0o600, (err, fd) => {
        if (err) {
          openFiles--;
          this.done(err);
          return;
        }
        this.fd = fd;
        writeAll(fd, text, (e) => this.done(e));
      });
    } else {
      // Past the cap, or the last write of a run: open, append, close.
      appendFile(this.path, text, { mode: 0o600 }, (err) => this.done(err));
    }
  }

  private done(err: NodeJS.ErrnoException | null): void {
    this.busy = false;
    if (err) this.failed(err);
    this.next();
  }
}

/**
 * Writes `text` (a string is handed to the file as it is: no Buffer of its own); the rest of a write
 * that took less than it was given is written from a Buffer.
 */
function writeAll(fd: number, text: string | Buffer, done: (err: NodeJS.ErrnoException | null) => void) {
  const cb = (err: NodeJS.ErrnoException | null, n: number) => {
    if (err) done(err);
    else if (n < Buffer.byteLength(text)) writeAll(fd, Buffer.from(text).subarray(n), done);
    else done(null);
  };
  if (typeof text === 'string') write(fd, text, null, 'utf8', cb);
  else write(fd, text, 0, text.length, null, cb);
}
