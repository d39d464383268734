import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { HatcheryError } from '../../core/errors.js';
import { decoded, send } from './http-send.js';
import { checkLiteral, type NetPolicy } from './net-guard.js';

/** Largest response body a guarded fetch reads (an agent card, a task, a whole event stream). */
export const FETCH_LIMIT_BYTES = 16 * 1024 * 1024;
/** Redirects followed, each to the same origin only. */
const MAX_REDIRECTS = 5;

/** Options of guardedFetch. */
export interface GuardedFetchOptions {
  /** Who is fetching, for error messages (`A2A agent "echo"`). */
  who: string;
  /** Headers added to requests to `origin` only: credentials never reach another host. */
  headers?: Readonly<Record<string, string>>;
  origin?: string;
  /** Largest body read (default FETCH_LIMIT_BYTES). */
  limitBytes?: number;
}

/** The URL, method, headers and body of fetch()'s arguments, whichever form they came in. */
async function requestOf(
  input: string | URL | Request,
  init: RequestInit | undefined,
): Promise<{ url: URL; method: string; headers: Headers; body: string | undefined; signal?: AbortSignal }> {
  const req = input instanceof Request ? input : undefined;
  const url = new URL(req ? req.url : String(input));
  const headers = new Headers(req?.headers);
  for (const [k, v] of new Headers(init?.headers)) headers.set(k, v);
  let body: string | undefined;
  if (init?.body !== undefined && init.body !== null) body = await new Response(init.body).text();
  else if (req?.body) body = await req.text();
  const signal = init?.signal ?? req?.signal ?? undefined;
  return { url, method: (init?.method ?? req?.method ?? 'GET').toUpperCase(), headers, body, signal };
}

/** A Node stream that fails once more than `limit` bytes went through. */
function capped(body: Readable, limit: number, what: string): Readable {
  let size = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limit) done(new Error(`${what}: the response is larger than ${limit} bytes`));
      else done(null, chunk);
    },
  });
  body.on('error', (err) => cap.destroy(err));
  return body.pipe(cap);
}

/** The fetch() Response of a node:http response. */
function toResponse(res: IncomingMessage, limit: number, what: string): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
  }
  // Statuses that carry no body, and ones fetch cannot represent.
  const empty = status === 204 || status === 205 || status === 304;
  if (empty) res.resume();
  const body = empty ? null : (Readable.toWeb(capped(decoded(res), limit, what)) as ReadableStream);
  return new Response(body, {
    status: Math.min(Math.max(status, 200), 599),
    statusText: res.statusMessage,
    headers,
  });
}

/**
 * A fetch() whose every connection goes through http_request's network guard (this machine and the
 * local network refused unless the operator allowed them, no DNS rebinding), that follows redirects
 * only within one origin, and reads at most `limitBytes` of a body. Libraries that take a `fetchImpl`
 * (the A2A SDK) get it instead of the global fetch.
 */
export function guardedFetch(policy: NetPolicy, options: GuardedFetchOptions): typeof fetch {
  const limit = options.limitBytes ?? FETCH_LIMIT_BYTES;
  const fail = (message: string, cause?: unknown) =>
    new HatcheryError('TOOL', `${options.who}: ${message}`, {}, cause === undefined ? undefined : { cause });
  return async (input, init) => {
    const req = await requestOf(input, init);
    let current = req.url;
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw fail(`only http and https URLs are allowed, not ${current.protocol}`);
    const sent: OutgoingHttpHeaders = {};
    for (const [k, v] of req.headers) sent[k] = v;
    if (options.headers && current.origin === options.origin) {
      for (const [k, v] of Object.entries(options.headers)) sent[k.toLowerCase()] = v;
    }
    delete sent['accept-encoding'];
    const signal = req.signal ?? new AbortController().signal;
    for (let hop = 0; ; hop++) {
      checkLiteral(current, policy, options.who);
      const res = await send(current, req.method, req.body, sent, policy, signal, options.who);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status < 300 || status >= 400 || status === 304 || !location) {
        return toResponse(res, limit, `${options.who}: ${current.href}`);
      }
      res.resume();
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw fail(`${current.href} redirected to an invalid URL "${location}"`);
      }
      if (next.origin !== current.origin) {
        throw fail(
          `${current.href} redirected to ${next.origin}, another host; redirects are followed only within one host: use the URL it redirects to`,
        );
      }
      if (hop >= MAX_REDIRECTS) throw fail(`${req.url.href}: more than ${MAX_REDIRECTS} redirects`);
      current = next;
    }
  };
}
