/**
 * Which addresses http_request may connect to. By default nothing on this machine or the local
 * network: loopback, private, link-local (cloud metadata), CGNAT, multicast and reserved ranges, in
 * every spelling (IPv4-mapped IPv6, NAT64, 6to4). `allowHosts` and `allowPrivateNetwork` open them.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { HatcheryError } from '../../core/errors.js';

/** What the operator opened (ToolResolverOptions.allowHosts / allowPrivateNetwork). */
export interface NetPolicy {
  /** Host names or addresses, optionally with `:port`, or `*.domain`; these may be private. */
  readonly allowHosts?: readonly string[];
  /** Every address may be reached (--allow-private-network). */
  readonly allowPrivateNetwork?: boolean;
}

type V4Range = readonly [base: number, bits: number, why: string];

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

const V4_BLOCKED: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified ("this network")'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'carrier-grade NAT (shared)'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local (cloud metadata)'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'IETF protocol assignments'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmarking'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved (broadcast)'],
];

function parseV4(address: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return v4(a, b, c, d);
}

function v4Blocked(n: number): string | undefined {
  for (const [base, bits, why] of V4_BLOCKED) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === base) return why;
  }
  return undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad included). */
function parseV6(address: string): number[] {
  let text = address.split('%')[0] ?? address;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const n = parseV4(quad[1]!);
    text = `${text.slice(0, quad.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (s: string) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

function v6Blocked(g: number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) | g7) >>> 0;
  const zeroTo4 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroTo4 && g5 === 0 && g6 === 0) return g7 <= 1 ? (g7 ? 'loopback' : 'unspecified') : 'reserved';
  // IPv4 inside IPv6 reaches that IPv4 address: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64.
  if (zeroTo4 && (g5 === 0xffff || g5 === 0)) return v4Blocked(embedded);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return v4Blocked(embedded);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'local NAT64';
  if (g0 === 0x2002) return v4Blocked(((g1 << 16) | g2) >>> 0);
  if ((g0 & 0xfe00) === 0xfc00) return 'private (unique local)';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'site-local';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

/** Why `address` (an IPv4 or IPv6 literal) is not public, e.g. `loopback`; undefined when it is. */
export function blockedRange(address: string): string | undefined {
  const bare = address.startsWith('[') ? address.slice(1, -1) : address;
  const kind = isIP(bare.split('%')[0] ?? bare);
  if (kind === 4) return v4Blocked(parseV4(bare));
  if (kind === 6) return v6Blocked(parseV6(bare));
  return 'not an IP address';
}

/** Host and port of an allow entry, normalised like a URL's (`[::1]:80`, `LOCALHOST`, `0x7f.1`). */
function parseAllowEntry(entry: string): { host: string; port: string } | undefined {
  let text = entry.trim();
  // A bare IPv6 address (`::1`) has no port; brackets make it a URL host.
  if (isIP(text) === 6) text = `[${text}]`;
  try {
    const u = new URL(`http://${text}`);
    // URL drops the default port; an entry that names :80 still means 80 only.
    const port = u.port || (/:80$/.test(text) ? '80' : '');
    return { host: u.hostname, port };
  } catch {
    return undefined;
  }
}

/** Returns `entries` when each is a host, host:port or *.domain; throws a USAGE error naming the bad one. */
export function checkAllowHosts(entries: readonly string[] | undefined): string[] | undefined {
  if (!entries) return undefined;
  for (const e of entries) {
    const parsed = parseAllowEntry(e);
    if (!parsed || /[/?#@]/.test(e)) {
      throw new HatcheryError(
        'USAGE',
        `--allow-host expects a host name or address, optionally with :port (api.internal, 127.0.0.1:8080, [::1]:8080, *.corp.example), got "${e}"`,
      );
    }
  }
  return [...entries];
}

/** True when `url`'s host (and port) is in `allowHosts`; `*.example.com` matches its subdomains. */
export function hostAllowed(url: URL, allowHosts: readonly string[] | undefined): boolean {
  if (!allowHosts || allowHosts.length === 0) return false;
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const host = url.hostname.replace(/\.$/, '');
  for (const raw of allowHosts) {
    const entry = parseAllowEntry(raw);
    if (!entry || (entry.port && entry.port !== port)) continue;
    const want = entry.host.replace(/\.$/, '');
    if (want === host) return true;
    if (want.startsWith('*.') && host.endsWith(want.slice(1))) return true;
  }
  return false;
}

/** The error for a refused address: names the URL, the address, its range and the flags that open it. */
function refusal(url: URL, address: string, range: string, who: string): HatcheryError {
  const port = url.port ? `:${url.port}` : '';
  return new HatcheryError(
    'TOOL',
    `${who}: refused ${url.href}: ${url.hostname} is ${address}, a ${range} address; requests to this machine and the local network are blocked. To allow it, start with --allow-host ${url.hostname}${port} (or --allow-private-network for every private address; tools.allowHosts / tools.allowPrivateNetwork of the Runtime)`,
    { tool: who, url: url.href, address },
  );
}

/** Checks a URL whose host is an IP literal (no lookup will happen); throws the refusal, naming `who`. */
export function checkLiteral(url: URL, policy: NetPolicy, who = 'http_request'): void {
  if (policy.allowPrivateNetwork || hostAllowed(url, policy.allowHosts)) return;
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0) return;
  const range = blockedRange(url.hostname);
  if (range) throw refusal(url, url.hostname.replace(/^\[|\]$/g, ''), range, who);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for node:http(s) that resolves the name, refuses it when ANY address is blocked, and hands
 * the socket only the checked addresses: the connection goes where the check looked (no DNS rebinding).
 */
export function guardedLookup(url: URL, policy: NetPolicy, who = 'http_request') {
  const open = policy.allowPrivateNetwork === true || hostAllowed(url, policy.allowHosts);
  return (hostname: string, options: { family?: number | string; all?: boolean }, cb: LookupCallback) => {
    const family =
      options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family) || 0;
    dnsLookup(hostname, { all: true, family: family as 0 | 4 | 6 }, (err, addresses) => {
      if (err) return cb(err, []);
      if (!open) {
        for (const a of addresses) {
          const range = blockedRange(a.address);
          if (range) return cb(refusal(url, a.address, range, who) as unknown as NodeJS.ErrnoException, []);
        }
      }
      if (options.all) return cb(null, addresses);
      const first = addresses[0];
      if (!first)
        return cb(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      cb(null, first.address, first.family);
    });
  };
}
