import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/server';
import { deserializeMessage, type JSONRPCMessage, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { formatBytes } from './outbound.js';

/**
 * Largest message sent or accepted, in bytes. The SDK client (and the SDK's own stdio transport)
 * drop the whole connection on a message over 10 MiB: staying under it keeps one bad message from
 * ending the session.
 */
const STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024 - 1024;

/** Options of the guarded stdio transport. */
export interface GuardedStdioOptions {
  /** Largest message in either direction, in bytes (default just under 10 MiB). */
  maxMessageBytes?: number;
}

/** The id of a JSON-RPC request whose text was cut: found at its start or its end, if anywhere. */
function requestId(head: string, tail: string): string | number | undefined {
  const m =
    /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(\d{1,15}|"[^"\\]{0,200}")/.exec(head) ??
    /"id"\s*:\s*(\d{1,15}|"[^"\\]{0,200}")\s*\}\s*$/.exec(tail);
  if (!m) return undefined;
  return m[1]!.startsWith('"') ? m[1]!.slice(1, -1) : Number(m[1]);
}

/**
 * The MCP stdio server transport, made robust at the boundary: a message too large for the client
 * is never written (a response becomes an error response naming the size; a notification is
 * dropped and reported), a client message over the limit is skipped (its request answered with an
 * error when its id can be read) instead of closing the session, and write failures (EPIPE, a value
 * JSON cannot encode) are reported through `onerror`, never thrown.
 */
export class GuardedStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly max: number;
  private buffer: Buffer | undefined;
  /** While skipping an oversized incoming line: its first bytes, last bytes and size so far. */
  private skipping: { head: string; tail: string; bytes: number } | undefined;
  private started = false;
  private closed = false;
  /** Messages sent during this turn, written together by `flush`. */
  private queued: string[] = [];
  /** What every send of this batch returns (one promise per batch, not per message), and its resolver. */
  private batch: Promise<void> | undefined;
  private settle: (() => void) | undefined;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    options: GuardedStdioOptions = {},
  ) {
    this.max = options.maxMessageBytes ?? STDIO_MAX_MESSAGE_BYTES;
  }

  private readonly onData = (chunk: Buffer): void => {
    try {
      this.take(chunk);
    } catch (err) {
      this.onerror?.(err as Error);
    }
  };

  private readonly onStreamError = (err: Error): void => {
    this.onerror?.(err);
  };

  /** Starts reading stdin. */
  async start(): Promise<void> {
    if (this.started) throw new Error('GuardedStdioServerTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
    // Without a listener, EPIPE on stdout (the client went away) would crash the process.
    this.stdout.on('error', this.onStreamError);
  }

  /** Hands the messages of one read to the server, in order, until a handler closes the transport. */
  private deliver(messages: JSONRPCMessage[]): void {
    for (const m of messages) {
      if (this.closed) return;
      try {
        this.onmessage?.(m);
      } catch (err) {
        // A throwing handler is reported; the next message is still handed over.
        this.onerror?.(err as Error);
      }
    }
  }

  private take(chunk: Buffer): void {
    let data = chunk;
    if (this.skipping) {
      const nl = data.indexOf(10);
      const end = nl < 0 ? data.length : nl;
      const s = this.skipping;
      s.bytes += end;
      s.tail = (s.tail + data.subarray(Math.max(0, end - 512), end).toString('utf8')).slice(-512);
      if (nl < 0) return;
      this.skipping = undefined;
      this.refuse(s);
      data = data.subarray(nl + 1);
    }
    const buf = this.buffer ? Buffer.concat([this.buffer, data]) : data;
    // Lines are read at an offset and the rest is cut once at the end: a burst of calls arrives as
    // one chunk of many lines, and cutting after each line made a Buffer object per message.
    let start = 0;
    const messages: JSONRPCMessage[] = [];
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0) break;
      const end = nl > start && buf[nl - 1] === 13 ? nl - 1 : nl;
      const bytes = nl - start;
      const line = buf.toString('utf8', start, end);
      start = nl + 1;
      if (bytes > this.max) {
        this.refuse({ head: line.slice(0, 512), tail: line.slice(-512), bytes });
        continue;
      }
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      messages.push(message);
    }
    this.buffer = start === 0 ? buf : start < buf.length ? buf.subarray(start) : undefined;
    if (this.buffer?.length === 0) this.buffer = undefined;
    else if (this.buffer && this.buffer.length > this.max) {
      // No end in sight: drop what came so far and skip to the end of the line.
      const b = this.buffer;
      this.buffer = undefined;
      this.skipping = {
        head: b.subarray(0, 512).toString('utf8'),
        tail: b.subarray(b.length - 512).toString('utf8'),
        bytes: b.length,
      };
    }
    // After the buffer is settled: a handler may close the transport, which drops it.
    if (messages.length > 0) this.deliver(messages);
  }

  /** Reports a skipped oversized client message, and answers it when it was a request. */
  private refuse(s: { head: string; tail: string; bytes: number }): void {
    const message = `a client message of ${formatBytes(s.bytes)} was skipped: over the server's limit of ${formatBytes(this.max)} per message (pass a file path instead of the content)`;
    this.onerror?.(new Error(message));
    const id = requestId(s.head, s.tail);
    if (id !== undefined) {
      this.write({ jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InvalidRequest, message } }).catch(
        () => undefined,
      );
    }
  }

  /** Sends a message; one too large for the client is replaced (response) or refused (other). */
  async send(message: JSONRPCMessage): Promise<void> {
    let json: string;
    try {
      json = `${JSON.stringify(message)}\n`;
    } catch (err) {
      json = '';
      this.onerror?.(new Error(`a message could not be encoded: ${(err as Error).message}`));
    }
    const bytes = json.length * 3 <= this.max ? json.length : Buffer.byteLength(json);
    if (json && bytes <= this.max) return this.write(json);
    const size = json ? formatBytes(bytes) : 'not encodable';
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) {
      const text = `the server's answer (${size}) is over the limit of ${formatBytes(this.max)} per message and was not sent`;
      this.onerror?.(new Error(text));
      return this.write({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: ProtocolErrorCode.InternalError, message: text },
      });
    }
    const what = 'method' in message ? message.method : 'message';
    const err = new Error(
      `${what} not sent: ${size}, over the limit of ${formatBytes(this.max)} per message`,
    );
    // Reported here too: the sender of a notification usually ignores failures.
    this.onerror?.(err);
    throw err;
  }

  private write(message: JSONRPCMessage | string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const json = typeof message === 'string' ? message : `${JSON.stringify(message)}\n`;
    this.queued.push(json);
    if (this.queued.length === 1) {
      setImmediate(this.flush);
      this.batch = new Promise((resolve) => {
        this.settle = resolve;
      });
    }
    return this.batch!;
  }

  /**
   * Writes every message queued during this turn of the event loop at once. Each `write` to a pipe is
   * a system call, and answers come back together (a burst of calls, the replies of one poll of the
   * network): one write for all of them is a large part of the transport's CPU less. The order is
   * the order of `send`; each `send` settles when its batch is written (or drained): the sends of one
   * batch share one promise.
   */
  private readonly flush = (): void => {
    const queued = this.queued;
    const done = this.settle!;
    if (queued.length === 0) return;
    this.queued = [];
    this.batch = undefined;
    this.settle = undefined;
    try {
      if (this.stdout.write(queued.length === 1 ? queued[0]! : queued.join(''))) done();
      else this.stdout.once('drain', done);
    } catch (err) {
      this.onerror?.(err as Error);
      done();
    }
  };

  /** Stops reading stdin. */
  async close(): Promise<void> {
    if (this.closed) return;
    // What was sent before closing still goes out (the process may exit right after).
    this.flush();
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    this.stdout.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.buffer = undefined;
    this.onclose?.();
  }
}
