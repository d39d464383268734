/**
 * Shared machinery of the fake vendor servers: a loopback HTTP server with a scripted reply queue,
 * request recording, delays that stop when the client disconnects, and control endpoints for use
 * from another process.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A parsed JSON request body. Deliberately loose: tests and reply functions index into vendor bodies freely.
 */
// biome-ignore lint/suspicious/noExplicitAny: untyped wire JSON, see above
export type WireBody = any;

/** A tool call the fake model makes; `rawArgs` sends argument text verbatim (e.g. invalid JSON). */
export interface FakeToolCall {
  name: string;
  args?: unknown;
  id?: string;
  rawArgs?: string;
}

/** A successful model reply. */
export interface FakeMessageReply {
  text?: string;
  toolCalls?: FakeToolCall[];
  usage?: { input?: number; output?: number };
  /** Vendor stop reason; defaults to the vendor's usual one for text or tool calls. */
  stopReason?: string;
  /** Wait this long before answering (stops early when the client disconnects). */
  delayMs?: number;
  /** Streaming only: wait this long between events. */
  chunkDelayMs?: number;
}

/**
 * A failure: HTTP status with an error body in the vendor's shape, or `body` verbatim as JSON, or `raw`
 * text (content-type from `headers`, default text/html). Status 200 with `body`/`raw` sends a wrong reply.
 */
export interface FakeErrorReply {
  status: number;
  message?: string;
  body?: unknown;
  raw?: string;
  /** Default `{ 'retry-after-ms': '1' }` so SDK retries are instant; pass `'retry-after-ms': ''` to drop it. */
  headers?: Record<string, string>;
  delayMs?: number;
}

/** A recorded request. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  body: WireBody;
  /** The client closed the connection before the response was complete. */
  disconnected: boolean;
}

/** Computes a reply from the parsed request body (route on content). */
export type FakeReplyFn = (body: WireBody, request: RecordedRequest) => FakeReply | Promise<FakeReply>;

/** Anything the reply queue accepts: plain text, a message, a failure, or a function of the request. */
export type FakeReply = string | FakeMessageReply | FakeErrorReply | FakeReplyFn;

/** Options of both fakes. */
export interface FakeServerOptions {
  /** Delay applied to every default (echo) reply, to simulate model latency. */
  latencyMs?: number;
  /** Fixed port; default 0 (ephemeral). */
  port?: number;
}

/** The running server. */
export interface StartedServer {
  /** `http://127.0.0.1:<port>`, without any API path. */
  url: string;
  close(): Promise<void>;
}

/** Writes one vendor's wire format; implemented by FakeOpenAI and FakeAnthropic. */
export interface VendorWire {
  /** True for the path of the vendor's chat endpoint. */
  matches(path: string): boolean;
  /** The reply when the queue is empty (deterministic echo, schema-aware). */
  defaultReply(body: WireBody): FakeMessageReply;
  /** The JSON of a non-streaming reply; `seq` numbers requests from 1, for ids. */
  message(body: WireBody, reply: FakeMessageReply, seq: number): unknown;
  /** The SSE frames of a streaming reply, each already formatted (`data: ...\n\n`). */
  events(body: WireBody, reply: FakeMessageReply, seq: number): string[];
  /** The error body for a status. */
  errorBody(status: number, message: string): unknown;
}

/** A scripted loopback server speaking one vendor's wire format. */
export class FakeServer {
  /** Every request, in arrival order (control endpoints excluded). */
  readonly requests: RecordedRequest[] = [];
  /** How many clients hung up before their response was complete. */
  disconnects = 0;
  private readonly queue: FakeReply[] = [];
  private server: Server | undefined;
  private baseUrl = '';

  constructor(
    private readonly wire: VendorWire,
    protected readonly options: FakeServerOptions = {},
  ) {}

  /** Queues replies, consumed one per request; the default echo answers once the queue is empty. */
  enqueue(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Replies still queued. */
  get pending(): number {
    return this.queue.length;
  }

  /** Forgets queued replies and recorded requests. */
  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
    this.disconnects = 0;
  }

  /** `http://127.0.0.1:<port>` once started. */
  get url(): string {
    if (!this.baseUrl) throw new Error('fake server not started');
    return this.baseUrl;
  }

  /** Starts listening on 127.0.0.1. */
  async start(): Promise<StartedServer> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } });
        else res.destroy();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    return { url: this.baseUrl, close: () => this.close() };
  }

  /** Stops the server, dropping keep-alive connections so close() never hangs. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path.startsWith('/_fake/')) return this.control(req.method ?? 'GET', path, text, res);
    let body: WireBody;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
    const record: RecordedRequest = { method: req.method ?? 'GET', path, headers, body, disconnected: false };
    const seq = this.requests.push(record);
    const closed = watchClose(res, () => {
      record.disconnected = true;
      this.disconnects++;
    });
    if (!this.wire.matches(path) || req.method !== 'POST') {
      return sendJson(res, 404, this.wire.errorBody(404, `no route for ${req.method} ${path}`));
    }
    if (body === undefined) return sendJson(res, 400, this.wire.errorBody(400, 'request body is not JSON'));
    let reply: FakeReply | undefined = this.queue.shift();
    let isDefault = reply === undefined;
    while (typeof reply === 'function') reply = await reply(body, record);
    if (reply === undefined) {
      reply = this.wire.defaultReply(body);
      isDefault = true;
    }
    if (typeof reply === 'string') reply = { text: reply };
    const delay = reply.delayMs ?? (isDefault ? this.options.latencyMs : undefined);
    if (delay && !(await closed.wait(delay))) return;
    if ('status' in reply) {
      const headers: Record<string, string> = { 'retry-after-ms': '1', ...reply.headers };
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      if (reply.raw !== undefined) {
        res.writeHead(reply.status, { 'content-type': 'text/html; charset=utf-8', ...headers });
        res.end(reply.raw);
        return;
      }
      const payload =
        reply.body ?? this.wire.errorBody(reply.status, reply.message ?? `fake error ${reply.status}`);
      return sendJson(res, reply.status, payload, headers);
    }
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const frames = this.wire.events(body, reply, seq);
      for (const [i, frame] of frames.entries()) {
        if (closed.isClosed) return;
        res.write(frame);
        const last = i === frames.length - 1;
        if (reply.chunkDelayMs && !last && !(await closed.wait(reply.chunkDelayMs))) return;
      }
      res.end();
      return;
    }
    sendJson(res, 200, this.wire.message(body, reply, seq));
  }

  /** `POST /_fake/replies` (JSON array) queues replies; `GET /_fake/requests` lists them; `POST /_fake/reset`. */
  private control(method: string, path: string, text: string, res: ServerResponse): void {
    if (method === 'POST' && path === '/_fake/replies') {
      const replies = JSON.parse(text || '[]') as FakeReply[];
      this.enqueue(...(Array.isArray(replies) ? replies : [replies]));
      sendJson(res, 200, { pending: this.queue.length });
    } else if (method === 'GET' && path === '/_fake/requests') {
      sendJson(res, 200, this.requests);
    } else if (method === 'POST' && path === '/_fake/reset') {
      this.reset();
      sendJson(res, 200, { ok: true });
    } else {
      sendJson(res, 404, { error: `unknown control endpoint ${method} ${path}` });
    }
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
) {
  if (res.destroyed) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/**
 * Tracks whether the client hung up. A response's 'close' fires on completion too, so only a close
 * before `writableFinished` counts (req 'close' fires as soon as the body is read on current Node).
 */
function watchClose(res: ServerResponse, onDisconnect: () => void) {
  let isClosed = false;
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: (ok: boolean) => void }>();
  res.on('close', () => {
    isClosed = true;
    if (!res.writableFinished) onDisconnect();
    for (const t of timers) {
      clearTimeout(t.timer);
      t.resolve(false);
    }
    timers.clear();
  });
  return {
    get isClosed() {
      return isClosed;
    },
    /** Resolves true after `ms`, or false as soon as the client disconnects. */
    wait(ms: number): Promise<boolean> {
      if (isClosed) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const entry = {
          timer: setTimeout(() => {
            timers.delete(entry);
            resolve(!isClosed);
          }, ms),
          resolve,
        };
        timers.add(entry);
      });
    },
  };
}

/** The text of the last user turn (strings, text parts, tool results), for the default echo. */
export function lastUserText(messages: WireBody[] | undefined): string {
  for (let i = (messages?.length ?? 0) - 1; i >= 0; i--) {
    const m = messages?.[i];
    if (m?.role !== 'user' && m?.role !== 'tool') continue;
    return contentText(m.content);
  }
  return '';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: WireBody) =>
      p?.type === 'text' ? String(p.text ?? '') : p?.type === 'tool_result' ? contentText(p.content) : '',
    )
    .join('');
}

/** A deterministic value matching a JSON Schema, so default replies satisfy forced tools and json_schema. */
export function sampleFromSchema(schema: WireBody, echo: string, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 8) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return sampleFromSchema(variants[0], echo, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type ?? (schema.properties ? 'object' : 'string')) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(schema.properties ?? {}))
        out[k] = sampleFromSchema(v, echo, depth + 1);
      return out;
    }
    case 'array':
      return schema.minItems > 0 ? [sampleFromSchema(schema.items, echo, depth + 1)] : [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return echo;
  }
}

/** Rough token count (4 characters a token), deterministic, for default usage. */
export function roughTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Splits text into word-sized pieces for streaming. */
export function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Splits a string in two halves, so argument JSON arrives in several fragments as it does for real. */
export function halves(text: string): string[] {
  if (text.length < 2) return [text];
  const mid = Math.floor(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)];
}

/** The wire text of a tool call's arguments. */
export function argsText(call: FakeToolCall): string {
  return call.rawArgs ?? JSON.stringify(call.args ?? {});
}
