import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import { blockedRange } from '../tools/builtin/net-guard.js';

/** Host names that always mean this machine. */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** True for addresses that listen on every interface. */
function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** The form a host name takes in a URL's `hostname` (IPv6 in brackets, lower case). */
function urlHostname(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * Host names a request may use to reach a server bound to `bindHost`: the loopback names, the bound
 * host, and for wildcard binds this machine's name and interface addresses. Anything else is what
 * a DNS-rebinding page would send.
 */
export function allowedHostnames(bindHost: string, extra: readonly string[] = []): Set<string> {
  const allowed = new Set(LOOPBACK);
  for (const h of extra) allowed.add(urlHostname(h));
  if (isWildcardHost(bindHost)) {
    const name = os.hostname().toLowerCase();
    allowed.add(name);
    allowed.add(`${name}.local`);
    for (const addrs of Object.values(os.networkInterfaces())) {
      for (const a of addrs ?? []) allowed.add(urlHostname(a.address));
    }
  } else {
    allowed.add(urlHostname(bindHost));
  }
  return allowed;
}

function hostnameOf(value: string, withScheme: boolean): string | undefined {
  try {
    return new URL(withScheme ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Checks the Host header against DNS rebinding; returns why the request is refused, if it is. */
export function checkHost(req: IncomingMessage, allowed: ReadonlySet<string>): string | undefined {
  const host = req.headers.host;
  if (!host) return 'missing Host header';
  const name = hostnameOf(host, false);
  if (!name || !allowed.has(name)) return `Host "${host}" is not allowed`;
  return undefined;
}

/**
 * Checks the Origin header (sent by browsers): a page from another site must not drive the server.
 * Requests without Origin (MCP clients, curl) pass.
 */
export function checkOrigin(req: IncomingMessage, allowed: ReadonlySet<string>): string | undefined {
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const name = origin === 'null' ? undefined : hostnameOf(origin, true);
  if (!name || !allowed.has(name)) return `Origin "${origin}" is not allowed`;
  return undefined;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** A checker of `Authorization: Bearer <token>` in constant time; undefined when no token is set. */
export function bearerChecker(token: string | undefined): ((req: IncomingMessage) => boolean) | undefined {
  if (!token) return undefined;
  const want = digest(token);
  return (req) => {
    const auth = req.headers.authorization;
    const m = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
    return m !== null && timingSafeEqual(digest(m[1]!), want);
  };
}

/**
 * True when `host` (an --http host) is reachable from this machine only: `localhost`, 127.0.0.0/8 or
 * ::1 in any spelling. Any other name counts as reachable from the network, whatever it resolves to.
 */
function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || blockedRange(h) === 'loopback';
}

/**
 * Why serving on `host` without a token is refused (undefined when it is not: a token is set or the
 * host is loopback). Anyone who reaches the port could run every hatchery served, and their tools.
 */
export function openBindProblem(host: string, port: number, token: string | undefined): string | undefined {
  if (token || isLoopbackHost(host)) return undefined;
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `--http ${shown}:${port} serves beyond this machine without a token: anyone who can reach the port could run every hatchery served here, and their tools. Pass --token TOKEN (or set HATCHERY_MCP_TOKEN), bind 127.0.0.1 (--http 127.0.0.1:${port}), or pass --insecure-no-token to serve without a token anyway`;
}
