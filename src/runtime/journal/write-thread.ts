/**
 * Journal writes off the JavaScript thread. A busy server's journal makes four file calls per run
 * (open, the first records, the last ones, close): about 45 µs of the JavaScript thread's time per
 * served call, a tenth of what the journal adds to it (bench/concurrent-calls.ts, a build with the
 * calls taken out). Here they go to one worker thread through a ring of shared memory: the JavaScript
 * thread copies a flush's bytes into the ring and goes on; the thread opens, appends and closes. No
 * message per write and no promise per write: only whoever waits for the writes (a read of a run, the
 * store's idle and close) asks the thread to say when it has caught up.
 *
 * Before the thread is up, and in a process that journals few runs (a command line run), the
 * JavaScript thread writes itself (journal-file.ts); a file stays with whichever wrote it first, so its
 * appends keep their order. At exit the JavaScript thread waits for the ring to drain while the thread
 * gets on (see EXIT_STALL_MS), so a normal exit loses nothing.
 */
import { Worker } from 'node:worker_threads';
import { journalWriteFailed } from './write-errors.js';
import { type RingLayout, type WriteThreadData, writeThreadMain } from './write-thread-main.js';

/** Indexes of the control words: where the JavaScript thread writes next, where the thread reads next, and a wish to be told. */
const HEAD = 0;
const TAIL = 1;
const WANT = 2;
/** Errors the thread has reported so far (its messages may come after it caught up). */
const ERRORS = 3;
/** 1 while the thread sleeps (or is about to): only then does a commit wake it. */
const SLEEP = 4;
/**
 * The doorbell the thread sleeps on: bumped by every wake (new records, a wish to be told), so a wake
 * that comes between the thread's last look and its sleep is never lost.
 */
const BELL = 5;
/** Bytes of the control words. */
const CONTROL_BYTES = 64;
/** Bytes of the ring (a power of two): a burst of a thousand runs' first records is about 0.5 MB. */
const RING_BYTES = 1 << 21;
/** Bytes before a record's payload: its length (a multiple of 4), its operation, its file, its payload's length. */
const RECORD_HEAD = 16;
/** Operations of a record. */
const OP_OPEN = 1;
const OP_WRITE = 2;
const OP_CLOSE = 3;
/** Skip to the ring's start (a record never straddles its end; the thread skips by the record's length). */
const OP_PAD = 4;
/** The layout the thread reads the ring by: these same values, its one source. */
const LAYOUT: RingLayout = {
  HEAD,
  TAIL,
  WANT,
  ERRORS,
  SLEEP,
  BELL,
  CONTROL_BYTES,
  RECORD_HEAD,
  OP_OPEN,
  OP_WRITE,
  OP_CLOSE,
};
/** The most payload one record carries: longer writes go as several. */
const MAX_PAYLOAD = RING_BYTES >> 3;
/**
 * A sleeping thread is woken when the ring holds this many bytes for it, or WAKE_MS after the first
 * record it has not seen, not once per turn: a wake is a system call and a switch of threads, and at a
 * thousand calls at once it was the largest cost the journal left on the JavaScript thread (about
 * 30 µs per served call in a CPU profile of bench/concurrent-calls.ts). Whoever waits for the writes
 * (drained(), a full ring, the exit) wakes it at once.
 */
const WAKE_BYTES = RING_BYTES >> 4;
const WAKE_MS = 20;
/**
 * How long an exit, or a write waiting for room in a full ring, waits for the thread while it writes
 * nothing: as long as it gets on, they wait (a ring full of new files can take seconds on a slow disk);
 * a thread stuck this long is given up.
 */
const EXIT_STALL_MS = 2_000;

/** A wait for the thread to have written `target` bytes of the ring. */
interface Waiter {
  target: number;
  resolve: () => void;
}

/** What the thread says: it is up, a file's write failed, or how far it has written. */
type ThreadMessage = { ready: true } | { file: number; error: string } | { consumed: number };

/** The JavaScript thread's side of the ring, and the worker thread that writes it. */
export class WriteThread {
  private readonly control: Int32Array;
  private readonly data: Buffer;
  private readonly worker: Worker;
  /** The next write's place, in [0, 2 × RING_BYTES) (two laps tell a full ring from an empty one). */
  private head = 0;
  /** The head as the thread last got it (HEAD). */
  private committed = 0;
  /** The wake of a sleeping thread WAKE_MS after a commit (one timer, re-armed), while armed. */
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeArmed = false;
  /** Bytes put in the ring ever, and written by the thread as it last said. */
  private submitted = 0;
  private consumed = 0;
  private waiters: Waiter[] = [];
  /** Errors of files, by id, as the thread reported them (the newest 512; ids are not reused for 2^31 files). */
  private readonly errors = new Map<number, string>();
  /** The path of each file opened lately (the newest 512), for write error reports. */
  private readonly folders = new Map<number, string>();
  private nextId = 1;
  /** Error messages of the thread received so far (see ERRORS). */
  private errorsSeen = 0;
  /** True once the thread has started: before, nobody writes through it. */
  ready = false;
  /** Set when the thread died: everything goes back to the JavaScript thread. */
  failed: unknown;

  constructor(maxOpenFiles: number) {
    const shared = new SharedArrayBuffer(CONTROL_BYTES + RING_BYTES);
    this.control = new Int32Array(shared, 0, CONTROL_BYTES / 4);
    this.data = Buffer.from(shared, CONTROL_BYTES, RING_BYTES);
    // The thread's code as an eval'd script, so the same source runs from dist and under the tests.
    this.worker = new Worker(`(${writeThreadMain.toString()})()`, {
      eval: true,
      workerData: { shared, maxOpenFiles, layout: LAYOUT } satisfies WriteThreadData,
      // None of the parent's flags (a loader, --input-type, a profiler): the thread needs none.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 32 },
    });
    this.worker.on('message', (m: ThreadMessage) => this.told(m));
    this.worker.on('error', (err) => this.died(err));
    this.worker.on('exit', (code) => this.died(new Error(`the journal's write thread exited (${code})`)));
    // It keeps no process alive (an exit waits for the ring in drainSync). After the listeners:
    // adding a 'message' listener refs the thread again.
    this.worker.unref();
    process.on('exit', () => this.drainSync());
  }

  /** A new file's id, and its open record. */
  open(path: string): number {
    const id = this.nextId++;
    if (this.nextId > 0x7fff_ffff) this.nextId = 1;
    // Only the folder is kept, for the report of a failed write (all journals of a store share it).
    this.folders.set(id, path);
    if (this.folders.size > 512) this.folders.delete(this.folders.keys().next().value as number);
    const bytes = Buffer.byteLength(path, 'utf8');
    const at = this.reserve(OP_OPEN, id, bytes);
    this.data.write(path, at, 'utf8');
    return id;
  }

  /** Appends `n` bytes of `buf` from `from` to file `id`. */
  write(id: number, buf: Uint8Array, from: number, n: number): void {
    for (let off = from, end = from + n; off < end; ) {
      const len = Math.min(MAX_PAYLOAD, end - off);
      const at = this.reserve(OP_WRITE, id, len);
      this.data.set(buf.subarray(off, off + len), at);
      off += len;
    }
  }

  /** Closes file `id` after its writes. */
  close(id: number): void {
    this.reserve(OP_CLOSE, id, 0);
  }

  /** The last error of file `id`'s writes, if any. */
  errorOf(id: number): string | undefined {
    return this.errors.get(id);
  }

  /**
   * Makes the records put in the ring so far the thread's to write: once per turn of the event loop
   * (due.ts) and per direct flush, not per record. A thread at work sees them by itself; a sleeping one
   * is woken once WAKE_BYTES wait for it, or WAKE_MS later (see WAKE_BYTES).
   */
  commit(): void {
    if (this.committed === this.head) return;
    this.committed = this.head;
    Atomics.store(this.control, HEAD, this.head);
    // Seen after the store of HEAD: a thread that is not sleeping yet checks HEAD after raising SLEEP.
    if (Atomics.load(this.control, SLEEP) === 0) return;
    const pending = (this.head - Atomics.load(this.control, TAIL) + 2 * RING_BYTES) % (2 * RING_BYTES);
    if (pending >= WAKE_BYTES) this.wake();
    else if (!this.wakeArmed) {
      this.wakeArmed = true;
      if (this.wakeTimer) this.wakeTimer.refresh();
      else this.wakeTimer = setTimeout(wakeLater, WAKE_MS, this).unref();
    }
  }

  /** Commits, and wakes the thread now (someone waits for its writes): an armed later wake is then moot. */
  private wake(): void {
    this.committed = this.head;
    Atomics.store(this.control, HEAD, this.head);
    this.wakeArmed = false;
    this.ring();
  }

  /** Rings the thread's doorbell (see BELL). */
  private ring(): void {
    Atomics.add(this.control, BELL, 1);
    Atomics.notify(this.control, BELL);
  }

  /** The deferred wake of a commit, unless the thread was woken since. */
  wakeIfArmed(): void {
    if (this.wakeArmed) this.wake();
  }

  /** Resolves when the thread has written everything put in the ring so far. */
  drained(): Promise<void> | undefined {
    this.commit();
    if (this.failed !== undefined) return undefined;
    // Caught up, and every error it reported is here (a waiter then reads a journal's error).
    const told = Atomics.load(this.control, ERRORS) === this.errorsSeen;
    if (told && Atomics.load(this.control, TAIL) === this.head) return undefined;
    const target = this.submitted;
    if (told && this.consumed >= target) return undefined;
    return new Promise<void>((resolve) => {
      this.waiters.push({ target, resolve });
      // Kept alive while someone waits (a command's last read), and told when the ring is drained.
      this.worker.ref();
      Atomics.store(this.control, WANT, 1);
      this.wake();
    });
  }

  /** Room for a record of `payload` bytes: its payload's place in `data`, the record's head filled in. */
  private reserve(op: number, id: number, payload: number): number {
    const size = (RECORD_HEAD + payload + 3) & ~3;
    let at = this.head & (RING_BYTES - 1);
    const toEnd = RING_BYTES - at;
    const pad = size > toEnd ? toEnd : 0;
    this.waitForRoom(size + pad);
    if (pad > 0) {
      // A pad record where one fits; shorter tails the thread skips by itself.
      if (pad >= RECORD_HEAD) this.recordHead(at, pad, OP_PAD, 0, 0);
      this.advance(pad);
      at = 0;
    }
    this.recordHead(at, size, op, id, payload);
    this.advance(size);
    return at + RECORD_HEAD;
  }

  private recordHead(at: number, size: number, op: number, id: number, payload: number): void {
    this.data.writeUInt32LE(size, at);
    this.data.writeUInt32LE(op, at + 4);
    this.data.writeUInt32LE(id, at + 8);
    this.data.writeUInt32LE(payload, at + 12);
  }

  private advance(bytes: number): void {
    this.head = (this.head + bytes) % (2 * RING_BYTES);
    this.submitted += bytes;
  }

  /** Blocks until the ring has `bytes` free (the thread writes behind; a full ring is rare). */
  private waitForRoom(bytes: number): void {
    const roomy = (tail: number) =>
      RING_BYTES - ((this.head - tail + 2 * RING_BYTES) % (2 * RING_BYTES)) >= bytes;
    if (this.waitWhileWriting(roomy, 100)) return;
    if (this.failed !== undefined) throw this.failed;
    // A dead thread's exit event cannot come while this thread waits here: give it up now, and its
    // files are written here from now on (what the ring held is lost).
    this.died(new Error(`the journal's write thread wrote nothing for ${EXIT_STALL_MS} ms`));
    throw this.failed;
  }

  /**
   * Blocks, waking the thread, until `done(tail)` holds: true then; false once the thread has failed
   * or has written nothing for EXIT_STALL_MS. Each wait is at most `pollMs`.
   */
  private waitWhileWriting(done: (tail: number) => boolean, pollMs: number): boolean {
    let last = -1;
    let since = 0;
    for (;;) {
      const tail = Atomics.load(this.control, TAIL);
      if (done(tail)) return true;
      if (this.failed !== undefined) return false;
      if (tail !== last) {
        last = tail;
        since = Date.now();
      } else if (Date.now() - since > EXIT_STALL_MS) return false;
      this.wake();
      Atomics.wait(this.control, TAIL, tail, pollMs);
    }
  }

  private told(m: ThreadMessage): void {
    if ('ready' in m) {
      this.ready = true;
      return;
    }
    if ('error' in m) {
      this.errorsSeen++;
      if (this.errors.size >= 512) this.errors.delete(this.errors.keys().next().value as number);
      this.errors.set(m.file, m.error);
      journalWriteFailed(this.folders.get(m.file) ?? 'the state folder/', m.error);
      return;
    }
    this.consumed = Math.max(this.consumed, m.consumed);
    this.settle();
  }

  /** Resolves the waits the thread has caught up with. */
  private settle(all = false): void {
    const left: Waiter[] = [];
    for (const w of this.waiters) {
      if (all || w.target <= this.consumed) w.resolve();
      else left.push(w);
    }
    this.waiters = left;
    if (left.length === 0) this.worker.unref();
    else {
      Atomics.store(this.control, WANT, 1);
      this.wake();
    }
  }

  private died(err: unknown): void {
    if (this.failed !== undefined) return;
    this.failed = err;
    this.ready = false;
    this.settle(true);
    // A stuck thread is stopped; one that exited is already.
    this.worker.terminate().catch(() => {});
  }

  /** Stops the thread as if it died (tests of the way back to this thread). */
  async kill(): Promise<void> {
    await this.worker.terminate();
    this.died(new Error('the write thread was stopped'));
  }

  /** At exit: waits for the thread to write what the ring holds (the event loop runs no more). */
  private drainSync(): void {
    if (this.failed !== undefined || !this.ready) return;
    this.waitWhileWriting((tail) => tail === this.head, 20);
  }
}

/** The deferred wake of a commit (a function of the module: no closure per timer). */
function wakeLater(thread: WriteThread): void {
  thread.wakeIfArmed();
}
