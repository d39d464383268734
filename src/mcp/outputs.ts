/** Scheme of the resources that hold full outputs too large for one tool result. */
const OUTPUT_SCHEME = 'hatchery-output:';

/** Bounds of the output store. */
export interface OutputStoreOptions {
  /** Outputs kept (oldest dropped first; default 20). */
  maxKept?: number;
  /** Bytes kept in all (oldest dropped first; default 256 MiB). */
  maxTotalBytes?: number;
  /** How long an output is kept, in milliseconds (default one hour; `serve --output-ttl`). */
  maxAgeMs?: number;
}

/** Default time an output is kept, in milliseconds. */
export const DEFAULT_OUTPUT_TTL_MS = 3_600_000;
/** Bytes kept of one output: the rest is dropped. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** Ids of dropped outputs remembered, so a late read says "expired" rather than "unknown". */
const MAX_GONE = 1000;

interface Stored {
  readonly bytes: Buffer;
  /** Byte offsets where the parts start (each part fits the part size, on a character boundary). */
  readonly starts: number[];
  readonly at: number;
  readonly mimeType: string;
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
  private readonly maxAgeMs: number;
  /** Why each recently dropped output went: its age ran out, or newer ones pushed it out. */
  private readonly gone = new Map<string, 'expired' | 'evicted'>();

  constructor(options: OutputStoreOptions = {}) {
    this.maxKept = options.maxKept ?? 20;
    this.maxTotalBytes = options.maxTotalBytes ?? 256 * 1024 * 1024;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_OUTPUT_TTL_MS;
  }

  /** How long outputs are kept, as results say it ("for 1 hour", "for 90 s"). */
  get ttlText(): string {
    if (this.maxAgeMs < 1000) return `for ${this.maxAgeMs} ms`;
    const s = Math.round(this.maxAgeMs / 1000);
    if (s % 3600 === 0) return `for ${s / 3600} hour${s === 3600 ? '' : 's'}`;
    if (s % 60 === 0) return `for ${s / 60} min`;
    return `for ${s} s`;
  }

  /** The error message of a read of `uri` that found nothing: expired, pushed out, or never there. */
  missing(uri: string): string {
    const m = /^hatchery-output:\/\/([0-9a-f-]{36})(?:\/\d+)?$/.exec(uri);
    const why = m ? this.gone.get(m[1]!) : undefined;
    // The URI comes from the client: quoted short.
    uri = uri.length > 120 ? `${uri.slice(0, 120)}…` : uri;
    const limits = `outputs are kept ${this.ttlText} (serve --output-ttl), the latest ${this.maxKept} and ${Math.round(this.maxTotalBytes / 1048576)} MiB at most`;
    if (why === 'expired')
      return `the output ${uri} has expired: ${limits}; run the tool again for a new one`;
    if (why === 'evicted')
      return `the output ${uri} was dropped to make room for newer ones: ${limits}; run the tool again for a new one`;
    return `no output ${uri}: it never existed, or it was dropped (${limits})`;
  }

  /** Keeps `text` (its first MAX_OUTPUT_BYTES) in parts of at most `partBytes`; returns their URIs. */
  put(text: string, partBytes: number, mimeType = 'text/plain'): StoredOutput {
    let bytes = Buffer.from(text);
    if (bytes.length > MAX_OUTPUT_BYTES) bytes = bytes.subarray(0, boundary(bytes, MAX_OUTPUT_BYTES));
    const starts: number[] = [];
    for (let at = 0; at < bytes.length; ) {
      starts.push(at);
      const end = at + partBytes >= bytes.length ? bytes.length : boundary(bytes, at + partBytes);
      at = end > at ? end : at + partBytes;
    }
    // The global Web Crypto, loaded on first use: importing node:crypto would load it at serve's start.
    const id = crypto.randomUUID();
    this.outputs.set(id, { bytes, starts, at: Date.now(), mimeType });
    this.total += bytes.length;
    this.prune();
    return { id, parts: starts.map((_, i) => `${OUTPUT_SCHEME}//${id}/${i + 1}`) };
  }

  /** The kept output of a part URI and the part's index, if it is kept. */
  private part(uri: string): { o: Stored; i: number } | undefined {
    const m = /^hatchery-output:\/\/([0-9a-f-]{36})\/(\d+)$/.exec(uri);
    const o = m ? this.outputs.get(m[1]!) : undefined;
    return o && { o, i: Number(m![2]) - 1 };
  }

  /** The text of a part URI, undefined when unknown or dropped. */
  read(uri: string): string | undefined {
    this.prune();
    const p = this.part(uri);
    if (!p || p.i < 0 || p.i >= p.o.starts.length) return undefined;
    return p.o.bytes.subarray(p.o.starts[p.i], p.o.starts[p.i + 1] ?? p.o.bytes.length).toString('utf8');
  }

  /** The media type of a kept output (text/plain, or application/json for a whole result). */
  mimeTypeOf(uri: string): string {
    return this.part(uri)?.o.mimeType ?? 'text/plain';
  }

  /** True while the output of `uri` is kept. */
  has(uri: string): boolean {
    this.prune();
    return this.part(uri) !== undefined;
  }

  /** True for a URI of this store's scheme. */
  owns(uri: string): boolean {
    return uri.startsWith(OUTPUT_SCHEME);
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, o] of this.outputs) {
      // Insertion order is age order: the oldest go first.
      const expired = now - o.at > this.maxAgeMs;
      if (expired || this.outputs.size > this.maxKept || this.total > this.maxTotalBytes) {
        this.outputs.delete(id);
        this.total -= o.bytes.length;
        this.gone.set(id, expired ? 'expired' : 'evicted');
        if (this.gone.size > MAX_GONE) this.gone.delete(this.gone.keys().next().value!);
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
