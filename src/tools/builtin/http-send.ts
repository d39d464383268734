import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { guardedLookup, type NetPolicy } from './net-guard.js';

// One HTTP request through the network guard: http_request and the A2A client both send this way.

/** Decompressors by content-encoding. */
const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The body of a response as sent, decompressed when the server compressed it anyway (we ask for identity). */
export function decoded(res: IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '').toLowerCase();
  const z = Object.hasOwn(DECODERS, enc) ? DECODERS[enc]!() : undefined;
  if (!z) return res;
  pipeline(res, z, () => {});
  return z;
}

/**
 * One request, without following redirects. node:http rather than fetch: its `lookup` option lets the
 * socket connect only to the addresses the guard checked, which fetch offers no way to do.
 */
export function send(
  url: URL,
  method: string,
  body: string | undefined,
  headers: OutgoingHttpHeaders,
  policy: NetPolicy,
  signal: AbortSignal,
  who?: string,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    // agent: false: a pooled socket could have been opened without the guard.
    const req = mod.request(url, {
      method,
      headers,
      agent: false,
      lookup: guardedLookup(url, policy, who),
      signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(body);
  });
}
