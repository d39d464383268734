import { randomUUID } from 'node:crypto';

/** Scheme of the resources that hold full outputs too large for one tool result. */
const OUTPUT_SCHEME = 'hatchery-output:';

/** Bounds of the output store. */
export interface OutputStoreOptions {
  /** Outputs kept (oldest dropped first; default 20). */
  maxKept?: number;
  /** Bytes kept in all (oldest dropped first; default 256 MiB). */
  maxTotalBytes?: number;
  /** Bytes kept of one output (the rest is dropped; default 64 MiB). */
  maxOutputBytes?: number;
  /** How long an output is kept, in milliseconds (default one hour). */
  maxAgeMs?: number;
}

interface Stored {
  readonly bytes: Buffer;
  /** Byte offsets where the parts start (each part fits the part size, on a character boundary). */
  readonly starts: number[];
  readonly at: number;
}

/** Where a stored output can be read: one resource URI per part. */
export interface StoredOutput {
  readonly id: string;
  readonly parts: string[];
}

/**
 * Full outputs of tool results that were cut to the result limit, kept for a while (bounded in
 * count, bytes and age, like background runs) and served as resources
 * `hatchery-output://<id>/<part>`, each part small enough for one message.
 */
export class OutputStore {
  private readonly outputs = new Map<string, Stored>();
  private total = 0;
  private readonly maxKept: number;
  private readonly maxTotalBytes: number;
  private readonly maxOutputBytes: number;
  private readonly maxAgeMs: number;

  constructor(options: OutputStoreOptions = {}) {
    this.maxKept = options.maxKept ?? 20;
    this.maxTotalBytes = options.maxTotalBytes ?? 256 * 1024 * 1024;
    this.maxOutputBytes = options.maxOutputBytes ?? 64 * 1024 * 1024;
    this.maxAgeMs = options.maxAgeMs ?? 3_600_000;
  }

  /** Keeps `text` (its first maxOutputBytes) in parts of at most `partBytes`; returns their URIs. */
  put(text: string, partBytes: number): StoredOutput {
    let bytes = Buffer.from(text);
    if (bytes.length > this.maxOutputBytes) bytes = bytes.subarray(0, boundary(bytes, this.maxOutputBytes));
    const starts: number[] = [];
    for (let at = 0; at < bytes.length; ) {
      starts.push(at);
      const end = at + partBytes >= bytes.length ? bytes.length : boundary(bytes, at + partBytes);
      at = end > at ? end : at + partBytes;
    }
    const id = randomUUID();
    this.outputs.set(id, { bytes, starts, at: Date.now() });
    this.total += bytes.length;
    this.prune();
    return { id, parts: starts.map((_, i) => `${OUTPUT_SCHEME}//${id}/${i + 1}`) };
  }

  /** The text of a part URI, undefined when unknown or dropped. */
  read(uri: string): string | undefined {
    this.prune();
    const m = /^hatchery-output:\/\/([0-9a-f-]{36})\/(\d+)$/.exec(uri);
    const o = m ? this.outputs.get(m[1]!) : undefined;
    if (!o) return undefined;
    const i = Number(m![2]) - 1;
    if (i < 0 || i >= o.starts.length) return undefined;
    return o.bytes.subarray(o.starts[i], o.starts[i + 1] ?? o.bytes.length).toString('utf8');
  }

  /** True for a URI of this store's scheme. */
  owns(uri: string): boolean {
    return uri.startsWith(OUTPUT_SCHEME);
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, o] of this.outputs) {
      // Insertion order is age order: the oldest go first.
      if (this.outputs.size > this.maxKept || this.total > this.maxTotalBytes || now - o.at > this.maxAgeMs) {
        this.outputs.delete(id);
        this.total -= o.bytes.length;
      } else break;
    }
  }
}

/** The largest offset ≤ `at` that does not split a UTF-8 character. */
function boundary(bytes: Buffer, at: number): number {
  let i = Math.min(at, bytes.length);
  while (i > 0 && i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}
