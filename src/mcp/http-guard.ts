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
 * a DNS-rebinding page would send. The SDK's Host and Origin guards check requests against this list;
 * its own localhost list knows neither a wildcard bind's names nor a reverse proxy's.
 */
export function allowedHostnames(bindHost: string, extra: readonly string[] = []): string[] {
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
  return [...allowed];
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
