import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  hostHeaderValidation,
  NodeStreamableHTTPServerTransport,
  originValidation,
  toNodeHandler,
} from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest } from '@modelcontextprotocol/server';
import { formatBinaryBytes } from '../core/bytes.js';
import { HatcheryError } from '../core/errors.js';
import { claimsVersion } from './envelope.js';
import { isOAuthPath, reply, replyOAuth, replyUnauthorized, tokenProblem } from './http-auth.js';
import { allowedHostnames, bearerChecker, openBindProblem } from './http-guard.js';
import type { HatcheryMcpServer } from './server.js';

/** Where and how to serve Streamable HTTP. */
export interface HttpServeOptions {
  /** Interface to bind (default 127.0.0.1: this machine only). */
  host?: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Demand `Authorization: Bearer <token>` on every request. */
  token?: string;
  /**
   * Serve a non-loopback host without a token (the CLI's --insecure-no-token). Without it, such a
   * serveHttp call rejects with a USAGE error before it listens.
   */
  insecureNoToken?: boolean;
  /** More Host names to accept (a reverse proxy's). */
  allowedHosts?: readonly string[];
  /** Largest request body, in bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /**
   * A session with no request in progress (no open event stream, no call running) for this long is
   * closed, so clients that vanish without ending their session do not hold memory (default 30 min).
   */
  sessionIdleMs?: number;
  /**
   * Most sessions kept at once (default 1000): each holds an SDK server and transport, so clients
   * that open sessions without end must not grow memory without bound. A new client takes the place
   * of the session idle the longest (no request of its client unanswered; an open event stream does
   * not count); when every session has a request in flight it gets HTTP 503.
   */
  maxSessions?: number;
  /**
   * Serve the A2A protocol too (the CLI's --a2a): every hatchery an A2A agent, at /a2a, /a2a/<name>
   * and the agent-card paths, behind the same checks and token. Its modules load only then.
   */
  a2a?: boolean;
  /** Serve MCP at /mcp (default true; false with --a2a-only). */
  mcp?: boolean;
}

/** Default idle time after which an HTTP session is closed. */
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
/** Default cap of HTTP sessions kept at once. */
const DEFAULT_MAX_SESSIONS = 1000;

/** A session's transport and what tells whether it is still in use. */
interface Session {
  transport: NodeStreamableHTTPServerTransport;
  /** Requests (including open GET event streams) not yet answered. */
  active: number;
  /** Ids of the client's JSON-RPC requests not answered yet: while any is, the session is not evicted. */
  calls: Set<string | number>;
  lastSeen: number;
}

/** A running HTTP endpoint. */
export interface HttpHandle {
  /** The endpoint URL, e.g. http://127.0.0.1:3000/mcp. */
  readonly url: string;
  readonly port: number;
  /** The A2A endpoint of the folder (with the a2a option), e.g. http://127.0.0.1:3000/a2a. */
  readonly a2aUrl?: string;
  /** Sessions open now. */
  readonly sessionCount: number;
  /** Closes every session and the listening socket. */
  close(): Promise<void>;
}

/** Path of the MCP endpoint. */
const MCP_PATH = '/mcp';
const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

/**
 * Reads a POST body as JSON; on a body over `limit` or not JSON, answers (413 naming --max-body, or
 * 400) and gives undefined. `empty`: an empty body is no body (A2A REST posts a cancel without one).
 */
async function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  empty = false,
): Promise<{ body: unknown } | undefined> {
  const tooBig = `request body too large: over the limit of ${formatBinaryBytes(limit)} (--max-body)`;
  // The rest of the body is not read: the connection closes after the answer.
  const tooLarge = () => void reply(res, 413, tooBig, { connection: 'close' });
  try {
    if (Number(req.headers['content-length']) > limit) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limit) return tooLarge();
      chunks.push(chunk as Buffer);
    }
    if (empty && size === 0) return { body: undefined };
    return { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (err) {
    reply(res, 400, `bad request: the body is not JSON (${(err as Error).message})`);
    return undefined;
  }
}

/**
 * Keeps `calls` as the ids of the client's requests not answered yet. Counted at the JSON-RPC level,
 * not per HTTP request: an answer is counted out before it is written, so a client that has its
 * answer never finds its session still busy, and an open event stream alone is no call.
 */
function trackCalls(transport: NodeStreamableHTTPServerTransport, calls: Set<string | number>): void {
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message) {
      if ('id' in message) calls.add(message.id);
      // A cancelled request gets no answer.
      else if (message.method === 'notifications/cancelled') {
        const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
        if (id !== undefined) calls.delete(id);
      }
    }
    onmessage?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (!('method' in message) && 'id' in message && message.id !== undefined) calls.delete(message.id);
    return send(message, options);
  };
}

/**
 * Whether a request speaks the 2026-07-28 era: its body carries the per-request envelope, or its
 * `MCP-Protocol-Version` header names a 2026 revision (the modern path then answers what is wrong).
 */
function isModern(req: IncomingMessage, body: unknown): boolean {
  const header = req.headers['mcp-protocol-version'];
  if (typeof header === 'string' && header >= '2026') return true;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return claimsVersion((body as { params?: { _meta?: unknown } }).params?._meta);
}

/**
 * Serves the hatchery server over Streamable HTTP at /mcp, Host and Origin checked against DNS
 * rebinding, and an optional bearer token. 2026-07-28 requests are served statelessly, a fresh SDK
 * server per request (replicas behind a load balancer share nothing but the run store); 2025-era
 * clients keep a session (an SDK server and its transport) each.
 */
export async function serveHttp(core: HatcheryMcpServer, options: HttpServeOptions): Promise<HttpHandle> {
  const host = options.host ?? '127.0.0.1';
  const open = options.insecureNoToken ? undefined : openBindProblem(host, options.port, options.token);
  if (open) throw new HatcheryError('USAGE', `${open} (serveHttp: the token or insecureNoToken option)`);
  // DNS rebinding and foreign pages: the SDK's guards answer a refused request with a 403 themselves.
  const allowed = allowedHostnames(host, options.allowedHosts);
  const hostAllowed = hostHeaderValidation(allowed);
  const originAllowed = originValidation(allowed);
  const authorized = bearerChecker(options.token);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const serveMcp = options.mcp !== false;
  // Imported only for --a2a: a server without it never loads the A2A SDK nor Express.
  const a2aModule = options.a2a ? await import('./a2a/mount.js') : undefined;
  const a2a = a2aModule?.mountA2a(core, { secured: authorized !== undefined });
  const sessions = new Map<string, Session>();
  const modern = createMcpHandler(() => core.createSession().server, {
    legacy: 'reject',
    maxRequestBodySize: maxBody,
    onerror: (err) => core.log('warning', `HTTP: ${err.message}`),
  });
  const serveModern = toNodeHandler(modern, { maxRequestBodySize: maxBody });
  // List changes reach 2026 clients on their subscriptions/listen streams.
  const unlisten = core.onListChanged(() => {
    modern.notify.toolsChanged();
    modern.notify.resourcesChanged();
  });
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxSessions = Math.max(1, options.maxSessions ?? DEFAULT_MAX_SESSIONS);
  /** Sessions being initialized: not in `sessions` yet, but they count against the cap. */
  let opening = 0;
  const drop = (id: string, s: Session, why: string): void => {
    sessions.delete(id);
    s.transport.close().catch(() => undefined);
    core.log('info', `HTTP session ${id} closed ${why}`);
  };
  /** Makes room for one more session: false when every session is busy. */
  const room = (): boolean => {
    while (sessions.size + opening >= maxSessions) {
      let oldest: [string, Session] | undefined;
      for (const entry of sessions) {
        if (entry[1].calls.size === 0 && (!oldest || entry[1].lastSeen < oldest[1].lastSeen)) oldest = entry;
      }
      if (!oldest) return false;
      drop(oldest[0], oldest[1], `to make room for a new client (--max-sessions ${maxSessions})`);
    }
    return true;
  };
  const track = async (session: Session, res: ServerResponse, run: () => Promise<void>): Promise<void> => {
    session.active++;
    session.lastSeen = Date.now();
    res.once('close', () => {
      session.active--;
      session.lastSeen = Date.now();
    });
    await run();
  };
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) {
        if (s.active === 0 && now - s.lastSeen >= idleMs) {
          drop(id, s, `after ${Math.round(idleMs / 1000)} s without requests`);
        }
      }
    },
    Math.max(10, Math.min(idleMs, 60_000)),
  );
  sweeper.unref();

  const endpoints = [
    serveMcp ? `the MCP endpoint is ${MCP_PATH}` : '',
    a2a ? 'the A2A endpoints are /a2a, /a2a/<hatchery> and /.well-known/agent-card.json' : '',
  ]
    .filter(Boolean)
    .join('; ');
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const isMcp = serveMcp && (url.pathname === MCP_PATH || url.pathname === `${MCP_PATH}/`);
    const isA2a = a2a !== undefined && a2aModule!.isA2aPath(url.pathname);
    if (!isMcp && !isA2a) {
      if (authorized && isOAuthPath(url.pathname)) replyOAuth(res, url.pathname);
      else reply(res, 404, `not found: ${endpoints}`);
      return;
    }
    if (!hostAllowed(req, res) || !originAllowed(req, res)) return;
    // Every A2A path too, agent cards included: they name every hatchery served, as tools/list does.
    if (authorized && !authorized(req)) {
      replyUnauthorized(res, tokenProblem(req));
      return;
    }
    if (isA2a) {
      const posted = req.method === 'POST' ? await readBody(req, res, maxBody, true) : undefined;
      if (req.method === 'POST' && !posted) return;
      await a2a.handle(req, res, posted?.body);
      return;
    }
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      if (!session) {
        reply(res, 404, 'session not found: it ended or the server restarted; initialize a new session');
        return;
      }
      // Read here, so --max-body holds for every POST (the SDK's own cap is a fixed 4 MB).
      const posted = req.method === 'POST' ? await readBody(req, res, maxBody) : undefined;
      if (req.method === 'POST' && !posted) return;
      await track(session, res, () => session.transport.handleRequest(req, res, posted?.body));
      return;
    }
    if (req.method !== 'POST') {
      reply(res, 400, 'bad request: no mcp-session-id; start with an initialize POST', {});
      return;
    }
    const posted = await readBody(req, res, maxBody);
    if (!posted) return;
    const body = posted.body;
    if (isModern(req, body)) {
      await serveModern(req, res, body);
      return;
    }
    if (!isInitializeRequest(body)) {
      reply(res, 400, 'bad request: no mcp-session-id; start with an initialize request');
      return;
    }
    if (!room()) {
      reply(
        res,
        503,
        `server busy: it has reached its limit of ${maxSessions} sessions (--max-sessions) and every one has a request in progress; retry later`,
        { 'retry-after': '5' },
      );
      return;
    }
    opening++;
    let counted = true;
    const opened = () => {
      if (counted) opening--;
      counted = false;
    };
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        opened();
        sessions.set(id, session);
      },
    });
    const session: Session = { transport, active: 0, calls: new Set(), lastSeen: Date.now() };
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    try {
      await core.connect(transport);
      trackCalls(transport, session.calls);
      await track(session, res, () => transport.handleRequest(req, res, body));
    } finally {
      opened();
      // An initialize that failed leaves a server no client can reach: close it.
      if (!transport.sessionId || !sessions.has(transport.sessionId))
        transport.close().catch(() => undefined);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      core.log('error', `HTTP ${req.method} ${req.url}: ${(err as Error).message}`);
      reply(res, 500, 'internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  const origin = `http://${shownHost}:${port}`;
  return {
    url: `${origin}${serveMcp ? MCP_PATH : '/a2a'}`,
    ...(a2a ? { a2aUrl: `${origin}/a2a` } : {}),
    port,
    get sessionCount() {
      return sessions.size;
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        unlisten();
        a2a?.close();
        await modern.close().catch(() => undefined);
        await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
        sessions.clear();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Open event streams would keep close() waiting forever.
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
