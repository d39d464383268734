import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { HatcheryError, isAbortError } from '../../core/errors.js';
import { defineBuiltin } from './define.js';
import { decoded, send } from './http-send.js';
import { checkLiteral } from './net-guard.js';

/** Largest response body http_request returns; the rest is cut with a note. */
export const HTTP_LIMIT_BYTES = 200_000;
/** Redirects http_request follows before giving up; each hop is checked like the first URL. */
const HTTP_MAX_REDIRECTS = 5;

// Headers fetch() would refuse to take from a caller; node:http would send them as given.
const FORBIDDEN_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
]);
// Credentials that must not follow a redirect to another origin (as browsers and fetch do).
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** Reads at most `limit` bytes of a body, then stops the rest of the download. */
async function readCapped(body: Readable, limit: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const value = chunk as Buffer;
    if (size + value.length > limit) {
      chunks.push(value.subarray(0, limit - size));
      body.destroy();
      return { bytes: Buffer.concat(chunks), cut: true };
    }
    chunks.push(value);
    size += value.length;
  }
  return { bytes: Buffer.concat(chunks), cut: false };
}

function fail(message: string, cause?: unknown): HatcheryError {
  return new HatcheryError('TOOL', `http_request: ${message}`, { tool: 'http_request' }, { cause });
}

/** http_request: GET or POST a URL and return the response body (capped). */
export const httpRequestTool = defineBuiltin({
  name: 'http_request',
  description: `Fetch a URL with GET or POST and return the response body as text (at most ${HTTP_LIMIT_BYTES} bytes). Non-2xx statuses are errors. Addresses on this machine and the local network are refused unless the operator allowed them.`,
  schema: z.object({
    url: z.string().min(1).describe('http:// or https:// URL'),
    method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method (default GET)'),
    body: z.string().optional().describe('Request body (POST only)'),
    headers: z.record(z.string(), z.string()).optional().describe('Request headers'),
  }),
  async run({ url, method, body, headers }, tc) {
    let current: URL;
    try {
      current = new URL(url);
    } catch {
      throw fail(`"${url}" is not a valid URL`);
    }
    if (current.protocol !== 'http:' && current.protocol !== 'https:') {
      throw fail(`only http and https URLs are allowed, not ${current.protocol}`);
    }
    if (body !== undefined && method === 'GET') {
      throw fail('a GET request has no body; use method "POST"');
    }
    const policy = tc.scope.shared.services.network;
    const sent: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers ?? {})) {
      if (!FORBIDDEN_HEADERS.has(k.toLowerCase())) sent[k.toLowerCase()] = v;
    }
    if (body !== undefined && sent['content-type'] === undefined)
      sent['content-type'] = 'text/plain;charset=UTF-8';
    let verb: string = method;
    let payload = body;
    for (let hop = 0; ; hop++) {
      // IP literals never reach the lookup, so they are checked here; names are checked as they resolve.
      checkLiteral(current, policy);
      let res: IncomingMessage;
      try {
        res = await send(current, verb, payload, sent, policy, tc.signal);
      } catch (err) {
        if (err instanceof HatcheryError) throw err;
        if (isAbortError(err) || tc.signal.aborted) throw err;
        const e = err as { code?: string; message?: string };
        throw fail(`${verb} ${current.href} failed: ${e.code ?? e.message}`, err);
      }
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && status !== 304 && location) {
        res.destroy();
        if (hop >= HTTP_MAX_REDIRECTS) throw fail(`${url}: more than ${HTTP_MAX_REDIRECTS} redirects`);
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          throw fail(`${current.href} redirected to an invalid URL "${location}"`);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw fail(`${current.href} redirected to ${next.protocol}, only http and https are allowed`);
        }
        // As fetch does: 303, and 301/302 after a POST, continue as a GET without the body.
        if (status === 303 || ((status === 301 || status === 302) && verb === 'POST')) {
          verb = 'GET';
          payload = undefined;
          delete sent['content-type'];
        }
        if (next.origin !== current.origin) for (const h of CREDENTIAL_HEADERS) delete sent[h];
        current = next;
        continue;
      }
      let bytes: Buffer;
      let cut: boolean;
      try {
        ({ bytes, cut } = await readCapped(decoded(res), HTTP_LIMIT_BYTES));
      } catch (err) {
        if (tc.signal.aborted) throw tc.signal.reason ?? err;
        throw fail(`reading the response of ${current.href} failed: ${(err as Error).message}`, err);
      }
      let text = bytes.toString('utf8');
      if (cut) text += `\n[response cut at ${HTTP_LIMIT_BYTES} bytes]`;
      if (status < 200 || status >= 300) {
        return { text: `HTTP ${status} ${res.statusMessage ?? ''}\n${text}`, isError: true };
      }
      return text;
    }
  },
});
