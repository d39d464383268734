/**
 * The journal's write thread (see write-thread.ts), as one function whose source the thread runs: it
 * must use nothing from outside its body (the ring's layout comes in its workerData). It reads the
 * ring's records in order and makes their file calls synchronously (a few hundred bytes to the page
 * cache, on its own thread). A failed call is reported and costs that file its bytes, never another
 * file's; the next call for it tries again.
 */

/** Where things are in the shared memory, and the record operations: write-thread.ts's, handed over. */
export interface RingLayout {
  /** Indexes of the control words. */
  HEAD: number;
  TAIL: number;
  WANT: number;
  ERRORS: number;
  SLEEP: number;
  BELL: number;
  /** Bytes of the control words, before the ring. */
  CONTROL_BYTES: number;
  /** Bytes before a record's payload. */
  RECORD_HEAD: number;
  OP_OPEN: number;
  OP_WRITE: number;
  OP_CLOSE: number;
}

/** What the thread is started with. */
export interface WriteThreadData {
  shared: SharedArrayBuffer;
  maxOpenFiles: number;
  layout: RingLayout;
}

/** The thread's whole code (see the top of this file): run from its source, so nothing from outside. */
export function writeThreadMain(): void {
  // Not require (an eval'd worker is an ES module where the parent runs with --input-type=module)
  // nor import() (the tests' transform rewrites it): the built-in modules as they are.
  const { workerData, parentPort } = process.getBuiltinModule('node:worker_threads');
  const fs = process.getBuiltinModule('node:fs');
  const { shared, maxOpenFiles, layout } = workerData as WriteThreadData;
  const { HEAD, TAIL, WANT, ERRORS, SLEEP, BELL, CONTROL_BYTES, RECORD_HEAD, OP_OPEN, OP_WRITE, OP_CLOSE } =
    layout;
  const ring = shared.byteLength - CONTROL_BYTES;
  const control = new Int32Array(shared, 0, CONTROL_BYTES / 4);
  const data = Buffer.from(shared, CONTROL_BYTES, ring);
  const port = parentPort!;
  /** Open files by id: their path, and their descriptor while one is kept (up to maxOpenFiles). */
  const files = new Map<number, { path: string; fd: number | undefined }>();
  let open = 0;
  let consumed = 0;

  const fail = (id: number, err: unknown) => {
    port.postMessage({ file: id, error: err instanceof Error ? err.message : String(err) });
    Atomics.add(control, ERRORS, 1);
  };

  const append = (id: number, bytes: Buffer) => {
    const f = files.get(id);
    if (f === undefined) return;
    try {
      if (f.fd === undefined && open < maxOpenFiles) {
        f.fd = fs.openSync(f.path, 'a', 0o600);
        open++;
      }
      if (f.fd === undefined) fs.appendFileSync(f.path, bytes, { mode: 0o600 });
      else for (let off = 0; off < bytes.length; ) off += fs.writeSync(f.fd, bytes, off);
    } catch (err) {
      fail(id, err);
    }
  };

  const closeFile = (id: number) => {
    const f = files.get(id);
    files.delete(id);
    if (f?.fd === undefined) return;
    open--;
    try {
      fs.closeSync(f.fd);
    } catch {
      // Every write before it returned: nothing is lost.
    }
  };

  port.postMessage({ ready: true });
  for (;;) {
    const bell = Atomics.load(control, BELL);
    const head = Atomics.load(control, HEAD);
    let tail = Atomics.load(control, TAIL);
    if (head === tail) {
      if (Atomics.exchange(control, WANT, 0) === 1) port.postMessage({ consumed });
      else {
        // Raised before HEAD is looked at again: a commit either sees it (and rings, at once or a
        // moment later) or stored its head before, and this thread does not sleep. A ring since BELL
        // was read ends the wait at once.
        Atomics.store(control, SLEEP, 1);
        if (Atomics.load(control, HEAD) === head) Atomics.wait(control, BELL, bell);
        Atomics.store(control, SLEEP, 0);
      }
      continue;
    }
    while (tail !== head) {
      const at = tail % ring;
      let size = ring - at;
      if (size >= RECORD_HEAD) {
        const recordSize = data.readUInt32LE(at);
        const op = data.readUInt32LE(at + 4);
        const id = data.readUInt32LE(at + 8);
        const payload = data.readUInt32LE(at + 12);
        const bytes = data.subarray(at + RECORD_HEAD, at + RECORD_HEAD + payload);
        if (op === OP_OPEN) files.set(id, { path: bytes.toString('utf8'), fd: undefined });
        else if (op === OP_WRITE) append(id, bytes);
        else if (op === OP_CLOSE) closeFile(id);
        size = recordSize;
      }
      tail = (tail + size) % (2 * ring);
      consumed += size;
      Atomics.store(control, TAIL, tail);
      Atomics.notify(control, TAIL);
    }
  }
}
