/**
 * How a FileJournal writes its file: the lines of a flush encoded into one reused buffer, then handed
 * to the write thread (write-thread.ts) once the process journals many runs, or written here through
 * one descriptor per running run, up to a cap. Joining a flush's lines into one string made a chain of
 * concatenations that the write then copied whole into a flat string (about a KiB of garbage per
 * served call, and 64 KB pieces per long run); each line is now encoded straight into the buffer.
 */
import { appendFileSync, closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { WriteThread } from './write-thread.js';

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

/**
 * Files a process opens on the JavaScript thread before it starts the write thread: a command line run
 * journals one or a few runs, and a thread (about 35 ms to start, a few MB) would cost it more than it
 * saves; a server passes this within its first calls.
 */
const THREAD_AFTER_FILES = 64;
/** Files opened so far on the JavaScript thread (see THREAD_AFTER_FILES). */
let openedHere = 0;
/** The write thread, once started; undefined before, and when tests turn it off. */
let thread: WriteThread | undefined;
/** Tests: 'always' starts the thread at the first file, 'never' keeps every write on this thread. */
let threadMode: 'always' | 'never' | undefined;

/** The write thread when it is up, starting it when this process has journaled enough runs. */
function writeThread(): WriteThread | undefined {
  if (thread !== undefined) return thread.ready ? thread : undefined;
  if (threadMode === 'never' || (threadMode === undefined && openedHere < THREAD_AFTER_FILES))
    return undefined;
  try {
    thread = new WriteThread(openFilesCap());
  } catch {
    // No thread (a process out of threads): the JavaScript thread keeps writing.
    threadMode = 'never';
  }
  return undefined;
}

/**
 * Sets when the write thread starts (tests), and starts it now for 'always'; resolves once it is up.
 * undefined: the default (after THREAD_AFTER_FILES files).
 */
export async function setWriteThread(mode: 'always' | 'never' | undefined): Promise<void> {
  threadMode = mode;
  if (mode !== 'always') return;
  writeThread();
  while (thread !== undefined && !thread.ready && thread.failed === undefined)
    await new Promise((r) => setTimeout(r, 5));
}

/** Resolves when the write thread has written everything given to it; undefined when it has nothing left. */
export function threadDrained(): Promise<void> | undefined {
  return thread?.drained();
}

/** Stops the write thread as if it died (tests): its files are written on this thread from then on. */
export async function killWriteThread(): Promise<void> {
  await thread?.kill();
}

/** Hands the write thread what was given to it since the last commit (see WriteThread.commit). */
export function commitWrites(): void {
  thread?.commit();
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
 * The file of one journal: appended to by the write thread, or here synchronously through a
 * descriptor kept open for the run (its first write decides, for the file's life, so appends keep
 * their order). A flush runs on its own turn of the event loop (never inside a node); handing open,
 * write and close to libuv's pool with a promise each cost more than the calls (measured: the async
 * appendFile per flush was a fifth of a journaled MCP call's CPU), the write thread takes them
 * without a promise or a message per call.
 */
export class JournalFile {
  /** The file, open for appending from the first write to close(). */
  private fd: number | undefined;
  /** The write thread's id of this file, when the thread writes it (from its first write on). */
  private tid: number | undefined;
  /** Set once this thread wrote the file: its appends stay here, in order. */
  private here = false;
  /** The write thread's id of this file when it last had one, for its errors (reported after a close). */
  private lastTid: number | undefined;

  constructor(readonly path: string) {}

  /** The last error the write thread had with this file (its own writes throw theirs). */
  get threadError(): string | undefined {
    return this.lastTid === undefined ? undefined : thread?.errorOf(this.lastTid);
  }

  /** The write thread's id of this file when the thread writes it (its first write decides). */
  private threaded(): number | undefined {
    if (this.tid !== undefined) {
      if (thread?.failed === undefined) return this.tid;
      // The thread died: this file's appends come here from now on.
      this.tid = undefined;
      this.here = true;
      return undefined;
    }
    if (this.here) return undefined;
    const t = writeThread();
    if (t === undefined) {
      this.here = true;
      openedHere++;
      return undefined;
    }
    this.tid = t.open(this.path);
    this.lastTid = this.tid;
    return this.tid;
  }

  /** Appends the piece and empties it. A failed open (the folder gone) throws, and is tried again next time. */
  writePiece(): void {
    const n = used;
    used = 0;
    const tid = this.threaded();
    if (tid !== undefined) {
      thread!.write(tid, piece, 0, n);
      return;
    }
    const fd = this.open();
    if (fd === undefined) appendFileSync(this.path, piece.subarray(0, n), { mode: 0o600 });
    else for (let off = 0; off < n; ) off += writeSync(fd, piece, off, n - off);
  }

  /** Appends `text` as it is (a line too long for the piece). */
  writeText(text: string): void {
    const tid = this.threaded();
    if (tid !== undefined) {
      const bytes = Buffer.from(text, 'utf8');
      thread!.write(tid, bytes, 0, bytes.length);
      return;
    }
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
    if (this.tid !== undefined) {
      const tid = this.tid;
      this.tid = undefined;
      if (thread?.failed === undefined) thread?.close(tid);
      return;
    }
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
