/**
 * How a FileJournal writes its file: one descriptor per running run, up to a cap, and the lines of a
 * flush encoded into one reused buffer. Joining a flush's lines into one string made a chain of
 * concatenations that the write then copied whole into a flat string (about a KiB of garbage per
 * served call, and 64 KB pieces per long run); each line is now encoded straight into the buffer.
 */
import { appendFileSync, closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/** Bytes of lines a flush gathers before it writes them. */
const PIECE_BYTES = 65_536;
/** The piece being gathered: flushes run one at a time (synchronously), so all journals share it. */
const piece = Buffer.allocUnsafe(PIECE_BYTES);
let used = 0;

/**
 * Journals that keep their file open, at most: beyond, a journal opens and closes its file at each
 * flush, so thousands of runs in flight never use up the process's descriptors. A quarter of the
 * process's limit where it can be read (Linux; Node raises the soft limit to the hard one at start),
 * between 256 and 4,096: a burst of a thousand calls then keeps one descriptor per run instead of
 * opening each file twice; where the limit is 1,024, as often, it stays 256.
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

/** Starts a flush's piece: whatever a flush that threw left in it belongs to no file. */
export function startPiece(): void {
  used = 0;
}

/**
 * Adds `text` (and a newline after it when `line`) to the piece; false when it does not fit, and
 * nothing was added: write the piece first, or the text alone when the piece is empty.
 */
export function addToPiece(text: string, line: boolean): boolean {
  // At most 3 bytes of UTF-8 per UTF-16 unit.
  if (used + text.length * 3 + 1 > PIECE_BYTES) return false;
  used += piece.write(text, used);
  if (line) piece[used++] = 0x0a;
  return true;
}

/** True when the piece holds nothing yet. */
export function pieceEmpty(): boolean {
  return used === 0;
}

/**
 * The file of one journal, appended to synchronously through a descriptor kept open for the run. A
 * flush runs on its own turn of the event loop (never inside a node), and a few hundred bytes to the
 * page cache cost less than handing open, write and close to the thread pool with a promise each
 * (measured: the async appendFile per flush was a fifth of a journaled MCP call's CPU).
 */
export class JournalFile {
  /** The file, open for appending from the first write to close(). */
  private fd: number | undefined;

  constructor(readonly path: string) {}

  /** Appends the piece and empties it. A failed open (the folder gone) throws, and is tried again next time. */
  writePiece(): void {
    const n = used;
    used = 0;
    const fd = this.open();
    if (fd === undefined) appendFileSync(this.path, piece.subarray(0, n), { mode: 0o600 });
    else for (let off = 0; off < n; ) off += writeSync(fd, piece, off, n - off);
  }

  /** Appends `text` as it is (a line too long for the piece). */
  writeText(text: string): void {
    const fd = this.open();
    if (fd === undefined) {
      appendFileSync(this.path, text, { mode: 0o600 });
      return;
    }
    const written = writeSync(fd, text);
    const total = Buffer.byteLength(text, 'utf8');
    if (written >= total) return;
    const buf = Buffer.from(text, 'utf8');
    for (let off = written; off < total; ) off += writeSync(fd, buf, off);
  }

  /** The descriptor, opened at the first write; undefined past the cap (append per write then). */
  private open(): number | undefined {
    if (this.fd !== undefined) return this.fd;
    if (openFiles >= openFilesCap()) return undefined;
    this.fd = openSync(this.path, 'a', 0o600);
    openFiles++;
    return this.fd;
  }

  /** Closes the file after the last write. */
  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    openFiles--;
    try {
      closeSync(fd);
    } catch {
      // Nothing is lost: every write before it returned.
    }
  }
}
