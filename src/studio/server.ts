/**
 * The studio's HTTP server (node:http, no framework), on loopback only. Every request needs the token
 * (the `token` query of the printed URL once, then an HttpOnly SameSite=Strict cookie) and a Host
 * header naming this server (no DNS rebinding); whatever changes something is a POST with a JSON body
 * (no cross-site form can send one). Every response is redacted of the runtime's secrets.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatError, HatcheryError } from '../core/errors.js';
import { packagePaths } from '../core/package.js';
import { secretValues } from '../core/secrets.js';
import { redactDeep } from '../journal/canonical.js';
import type { Runtime } from '../runtime/runtime.js';
import { type FolderChange, StudioFolder } from './folder.js';
import { StudioRuns } from './runs.js';

/**
 * The prefix of the cookie that lets the page in after its first load. Browsers send a 127.0.0.1
 * cookie to every port of 127.0.0.1, so its name carries the port and a random instance id, and its
 * value is a random key of this instance, not the token: another local server that receives it learns
 * neither the URL's token nor a key any other studio accepts.
 */
const COOKIE = 'hatchery_studio_';
/** Largest request body accepted. */
const MAX_BODY = 1024 * 1024;
/** Comment lines on the event stream keep proxies and the browser from closing an idle one. */
const HEARTBEAT_MS = 15_000;
/** The page's files: served by name from this table only, so no URL can reach another file. */
const ASSETS: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/style.css': 'style.css',
};
const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
/** The page runs only its own script; the graphs' inline `<style>` needs inline styles. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Options of the studio server. */
export interface StudioOptions {
  dir: string;
  runtime: Runtime;
  /** Port on 127.0.0.1 (0: a free one). */
  port?: number;
  /** The access token (default: 32 random hex digits). */
  token?: string;
  /** Quiet time of the folder watcher (tests). */
  debounceMs?: number;
  /** Receives warnings (a watcher error). */
  log?: (line: string) => void;
}

/** A running studio. */
export interface Studio {
  /** The page's URL with its token. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** The `name=value` of this instance's cookie, as a browser sends it back after the first load. */
  readonly cookie: string;
  readonly folder: StudioFolder;
  readonly runs: StudioRuns;
  /** Cancels the studio's runs, stops watching and closes the server (not the runtime). */
  close(): Promise<void>;
}

/** Compares two strings in constant time. */
function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieToken(req: IncomingMessage, name: string): string | undefined {
  const pair = (req.headers.cookie ?? '').split(';').find((p) => p.trim().startsWith(`${name}=`));
  return pair?.slice(pair.indexOf('=') + 1).trim();
}

/** Reads a JSON body (a JSON content type, at most MAX_BODY bytes). */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    throw new HttpError(415, 'send the body as JSON with "Content-Type: application/json"');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, `the body is larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new HttpError(400, 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

/** An error with its HTTP status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof HatcheryError) return err.code === 'USAGE' ? 400 : err.code === 'NOT_FOUND' ? 404 : 409;
  return 500;
}

/** Starts the studio: loads and watches the folder, listens on 127.0.0.1. */
export async function startStudio(options: StudioOptions): Promise<Studio> {
  const token = options.token ?? randomBytes(16).toString('hex');
  // Unrelated to the token and new for every instance, even one restarted with the same token.
  const instance = randomBytes(6).toString('hex');
  const cookieKey = randomBytes(32).toString('hex');
  const secrets = secretValues(options.runtime.env, [token, cookieKey]);
  const clean = (value: unknown) => JSON.stringify(redactDeep(value, secrets));
  const streams = new Set<ServerResponse>();
  const send = (type: string, data: unknown) => {
    const frame = `event: ${type}\ndata: ${clean(data)}\n\n`;
    for (const s of streams) s.write(frame);
  };
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const folder = new StudioFolder(
    options.dir,
    options.runtime.loadOptions,
    (change: FolderChange) => send('folder', change),
    log,
  );
  // No run may plant a file the studio would then show and run.
  options.runtime.protectServed(folder.registry.dir, () => folder.registry.dependencies());
  await folder.start(options.debounceMs);
  // Runs whose process is gone (a crash, a kill) are marked interrupted, as `serve` does: resumable here.
  await options.runtime.store
    ?.claimInterrupted()
    .catch((err: unknown) => log(`studio: run journal: ${formatError(err)}`));
  const runs = new StudioRuns(options.runtime, folder, send, secrets);
  const assets = pathToFileURL(`${path.join(packagePaths().code, 'studio', 'assets')}/`);
  let port = 0;
  const cookieName = () => `${COOKIE}${port}_${instance}`;

  const reply = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(clean(value));
  };

  const api = async (req: IncomingMessage, res: ServerResponse, route: string): Promise<void> => {
    const method = req.method ?? 'GET';
    const only = (want: 'GET' | 'POST') => {
      if (method !== want)
        throw new HttpError(405, `${route} takes ${want === 'GET' ? 'GET' : 'POST with a JSON body'}`);
    };
    if (route === '/api/hatcheries') {
      only('GET');
      return reply(res, 200, {
        dir: folder.registry.dir,
        hatcheries: folder.views(),
        problems: folder.registry.fileProblems(),
        messages: folder.messages(),
        journal: options.runtime.store !== undefined,
      });
    }
    if (route === '/api/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' });
      res.write(': hatchery studio\n\n');
      streams.add(res);
      const beat = setInterval(() => res.write(': beat\n\n'), HEARTBEAT_MS);
      res.on('close', () => {
        clearInterval(beat);
        streams.delete(res);
      });
      return;
    }
    if (route === '/api/runs') {
      if (method === 'GET') return reply(res, 200, { runs: await runs.list() });
      only('POST');
      return reply(res, 202, runs.start(await jsonBody(req)));
    }
    const m = /^\/api\/runs\/([^/]+)(?:\/(cancel|resume))?$/.exec(route);
    if (m) {
      const id = decodeURIComponent(m[1] as string);
      only(m[2] ? 'POST' : 'GET');
      if (m[2] === 'cancel') return reply(res, 200, await runs.cancel(id));
      if (m[2] === 'resume') return reply(res, 202, await runs.resume(id, await jsonBody(req)));
      return reply(res, 200, await runs.detail(id));
    }
    throw new HttpError(404, `no such API: ${route}`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader('content-security-policy', CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cache-control', 'no-store');
    // DNS rebinding: a page of another site resolved to 127.0.0.1 sends its own name as Host.
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      throw new HttpError(403, 'this server answers only to 127.0.0.1 and localhost');
    const url = new URL(req.url ?? '/', `http://${host}`);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`)
      throw new HttpError(403, 'requests from other origins are refused');
    const fromQuery = url.searchParams.get('token');
    const fromCookie = fromQuery === null ? cookieToken(req, cookieName()) : undefined;
    const ok =
      fromQuery !== null ? same(fromQuery, token) : fromCookie !== undefined && same(fromCookie, cookieKey);
    if (!ok) throw new HttpError(401, 'open the URL that "hatchery-mcp studio" printed (it holds the token)');
    if (fromQuery !== null && req.method === 'GET' && url.pathname === '/') {
      // The token moves to a cookie the page's script cannot read, and leaves the address bar.
      res.writeHead(303, {
        location: '/',
        'set-cookie': `${cookieName()}=${cookieKey}; HttpOnly; SameSite=Strict; Path=/`,
      });
      res.end();
      return;
    }
    if (url.pathname.startsWith('/api/')) return api(req, res, url.pathname);
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    const name = Object.hasOwn(ASSETS, url.pathname) ? ASSETS[url.pathname] : undefined;
    if (!name || req.method !== 'GET') throw new HttpError(404, `no such page: ${url.pathname}`);
    const body = await readFile(new URL(name, assets));
    res.writeHead(200, { 'content-type': TYPES[name.split('.').pop() as string] as string });
    res.end(body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = statusOf(err);
      if (status === 500) log(`studio: ${formatError(err)}`);
      // A response whose head went out already can only be ended.
      if (res.headersSent) res.end();
      else reply(res, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });
  try {
    // once() rejects when 'error' comes first (a port in use).
    await once(server.listen(options.port ?? 0, '127.0.0.1'), 'listening');
  } catch (err) {
    await folder.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES')
      throw new HatcheryError(
        'USAGE',
        `cannot listen on 127.0.0.1:${options.port} (${code === 'EADDRINUSE' ? 'the port is in use' : 'permission denied'}); pick another --port, or leave it out for a free one`,
      );
    throw err;
  }
  port = (server.address() as AddressInfo).port;
  return {
    cookie: `${cookieName()}=${cookieKey}`,
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    folder,
    runs,
    close: async () => {
      await runs.close();
      await folder.close();
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
