import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The `fetch` the model SDKs get: their request over `node:http`/`node:https` with keep-alive agents,
 * answered with a standard `Response`.
 *
 * Why: Node 20's global fetch (undici) costs about 700 µs of CPU per chat completion call here,
 * this about 440 (`bench/concurrent-calls.ts`; see docs/architecture.md). A served hatchery spends
 * most of a drone's CPU in that one place, so it is the server's throughput under load.
 *
 * What it does not do, it hands to the global fetch, unchanged: other schemes, bodies that are not
 * text or bytes (uploads), redirects, and any setup that routes fetch through a proxy (a global
 * undici dispatcher other than the default, or `NODE_USE_ENV_PROXY`). TLS is Node's own, with the same
 * CA store and `NODE_EXTRA_CA_CERTS` as fetch.
 */
export function createNodeFetch(options: NodeFetchOptions = {}): typeof fetch {
  const idle = options.idleTimeoutMs ?? 4000;
  let made: { http: http.Agent; https: https.Agent } | undefined;
  // One keep-alive agent per scheme, made on first use: connections are reused across calls and
  // providers, as undici keeps one pool.
  const agents = () =>
    (made ??= {
      http: keepingAlive(new http.Agent({ keepAlive: true, maxFreeSockets: 1024 }), idle),
      https: keepingAlive(new https.Agent({ keepAlive: true, maxFreeSockets: 1024 }), idle),
    });
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const body = init?.body;
    if (
      url === undefined ||
      !(body == null || typeof body === 'string' || body instanceof Uint8Array) ||
      (init as { dispatcher?: unknown } | undefined)?.dispatcher !== undefined ||
      proxied()
    ) {
      return fetch(input, init);
    }
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') return fetch(input, init);
    const agent = secure ? agents().https : agents().http;
    return new Promise((resolve, reject) => {
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const headers = headersOf(init?.headers);
      if (body != null && headers['content-length'] === undefined) {
        headers['content-length'] = String(
          typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
        );
      }
      const options: http.RequestOptions = {
        protocol: target.protocol,
        // An IPv6 literal comes bracketed in a URL, bare in a socket address.
        hostname: target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: init?.method ?? 'GET',
        headers,
        agent,
      };
      if (target.username || target.password) {
        options.auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      }
      if (signal) options.signal = signal;
      let req: http.ClientRequest;
      try {
        req = (secure ? https : http).request(options, (res) => {
          // A throw here would be an uncaught exception in an event handler: it becomes the rejection.
          try {
            respond(res, input, init, signal).then(resolve, reject);
          } catch (err) {
            res.destroy();
            reject(err);
          }
        });
      } catch (err) {
        // Node refuses a header value that fetch would refuse too (e.g. a newline): same outcome, a rejection.
        reject(err);
        return;
      }
      // `on`, not `once`: an error event after the first (a reset after an abort) must find a listener,
      // or it would be thrown and end the server; the promise takes only the first.
      req.on('error', (err) => reject(failure(signal, err)));
      req.end(body ?? undefined);
    });
  };
}

const HINT = Symbol('keep-alive timeout hint, s');
type Hinted = Socket & { [HINT]?: number };

/**
 * How long a connection stays open once idle, as undici decides it: as long as the server's
 * `Keep-Alive: timeout=N` says, less a second so that it is not reused just as the server closes it
 * (at most 10 minutes), else `idle` ms. Idle connections never keep the process alive.
 */
function keepingAlive<A extends http.Agent>(agent: A, idle: number): A {
  agent.keepSocketAlive = (socket: Hinted) => {
    const hint = socket[HINT];
    const ms = hint === undefined ? idle : Math.min(hint * 1000 - 1000, 600_000);
    if (ms <= 0) return false;
    socket.setKeepAlive(true, 1000);
    socket.unref();
    socket.setTimeout(ms);
    return true;
  };
  return agent;
}

/** Options of {@link createNodeFetch}. */
export interface NodeFetchOptions {
  /** How long an idle kept-alive connection stays open when the server does not say, in ms (default 4000, undici's). */
  idleTimeoutMs?: number;
}

/** The process's {@link createNodeFetch}, shared by every OpenAI and Anthropic client hatchery-mcp makes. */
export const nodeFetch: typeof fetch = createNodeFetch();

/** Statuses whose response has no body, for which `new Response` refuses one. */
const NULL_BODY = new Set([101, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);

/** The Response for a received head: a redirect is replayed by the global fetch, which follows it. */
function respond(
  res: IncomingMessage,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const status = res.statusCode ?? 0;
  if (REDIRECT.has(status) && res.headers.location) {
    res.resume();
    return fetch(input, init);
  }
  if (status < 200 || status > 599) {
    res.destroy();
    return Promise.reject(
      new Error(`the server answered with HTTP status ${status}, which fetch does not accept`),
    );
  }
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const head = { status, statusText: res.statusMessage ?? '', headers };
  const socket = res.socket as Hinted | null;
  if (socket) {
    // Read by keepingAlive when the agent keeps the connection after this response.
    const hint = /^\s*timeout=(\d+)/i.exec(String(res.headers['keep-alive'] ?? ''))?.[1];
    socket[HINT] = hint === undefined ? undefined : Number(hint);
  }
  if (NULL_BODY.has(status)) {
    res.resume();
    return Promise.resolve(new Response(null, head));
  }
  const source = decoded(res);
  if (signal) {
    // An abort while the body streams fails the body with fetch's AbortError, not the socket's
    // "aborted" that destroying the request gives the response.
    const onAbort = () => source.destroy(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    source.once('close', () => signal.removeEventListener('abort', onAbort));
  }
  // A connection that closes mid-body ends the response without 'end' or, on some paths, 'error'.
  res.once('close', () => {
    if (!res.complete) source.destroy(failure(signal, cutShort()) as Error);
  });
  // Every body is read as it comes, with backpressure: one read whole first (as this did for JSON)
  // holds what a hostile endpoint sends, a small gzip body inflating to gigabytes, before any cap
  // (reply-cap.ts) can stop it.
  return Promise.resolve(new Response(Readable.toWeb(source) as ReadableStream<Uint8Array>, head));
}

/** The body as sent, or decompressed as fetch would (the SDKs' request headers accept any encoding). */
function decoded(res: IncomingMessage): Readable {
  const encoding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  res.on('error', (err) => decoder.destroy(err));
  // A connection cut mid-body must fail the decoded stream too, not leave it waiting.
  res.once('close', () => {
    if (!res.complete) decoder.destroy(cutShort());
  });
  return res.pipe(decoder);
}

/** Request headers as Node takes them, from whatever form of `HeadersInit` the SDK passed. */
function headersOf(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  const headers = init instanceof Headers ? init : new Headers(init);
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** What a request fails with: fetch's AbortError once its signal aborted (a reset follows it), else `err`. */
function failure(signal: AbortSignal | undefined, err: unknown): unknown {
  return signal?.aborted ? abortError(signal) : err;
}

/** The error of a response whose connection closed before its body ended. */
const cutShort = (): Error => new Error('the connection closed before the response ended');

/** The error fetch rejects with when its signal aborts: an `AbortError` carrying the reason. */
function abortError(signal: AbortSignal): Error {
  const err = new DOMException('This operation was aborted', 'AbortError');
  (err as { cause?: unknown }).cause = signal.reason;
  return err;
}

const UNDICI_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/** True when fetch may go through a proxy that `node:http` would not know about. */
function proxied(): boolean {
  if (process.env.NODE_USE_ENV_PROXY) return true;
  const dispatcher = (globalThis as Record<symbol, unknown>)[UNDICI_DISPATCHER];
  // Node installs a plain `Agent` on first use of fetch; anything else was set up by the program.
  return (
    dispatcher !== undefined &&
    (dispatcher as { constructor?: { name?: string } }).constructor?.name !== 'Agent'
  );
}
