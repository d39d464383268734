import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { blockedRange, hostAllowed } from '../../src/tools/builtin/net-guard.js';
import type { ToolResolverOptions } from '../../src/tools/resolve.js';
import { runCli, tempDir } from '../helpers.js';
import { loadIn } from '../tools/helpers.js';

/** A loopback server that records the paths it was asked for and answers `<name> <path>`. */
class Target {
  readonly hits: string[] = [];
  port = 0;
  private readonly server: Server;
  constructor(
    readonly name: string,
    redirect?: (path: string) => string | undefined,
  ) {
    this.server = createServer((req, res) => {
      this.hits.push(req.url ?? '');
      const to = redirect?.(req.url ?? '');
      if (to) {
        res.writeHead(302, { location: to });
        res.end();
        return;
      }
      res.end(`${name} ${req.url}`);
    });
  }
  async start(host = '127.0.0.1'): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, host, r));
    this.port = (this.server.address() as AddressInfo).port;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** Runs one http_request baneling with the given tool options; resolves to its output or the error. */
async function fetchAs(url: string, tools: ToolResolverOptions = {}): Promise<string | HatcheryError> {
  const h = loadIn(tempDir(), {
    name: 'get',
    desc: 'd',
    nodes: [{ type: 'tool', tool_name: 'http_request', tool_args: { url } }],
  });
  try {
    return (await new Runtime({ env: {}, tools }).run(h)).output;
  } catch (err) {
    if (err instanceof HatcheryError) return err;
    throw err;
  }
}

const target = new Target('target');
const second = new Target('second');
// Redirects /to-second to the second server and /to-metadata to the cloud metadata address.
const bouncer: Target = new Target('bouncer', (p) =>
  p === '/to-second'
    ? `http://127.0.0.1:${second.port}/secret`
    : p === '/to-localhost'
      ? `http://localhost:${second.port}/secret`
      : p === '/to-metadata'
        ? 'http://169.254.169.254/latest/meta-data/'
        : p === '/to-self'
          ? `http://127.0.0.1:${bouncer.port}/done`
          : p.startsWith('/loop')
            ? `/loop${p.length}`
            : undefined,
);

beforeAll(async () => {
  await target.start();
  await second.start();
  await bouncer.start();
});
afterAll(async () => {
  await Promise.all([target.stop(), second.stop(), bouncer.stop()]);
});
beforeEach(() => {
  for (const t of [target, second, bouncer]) t.hits.length = 0;
});

function expectRefused(res: string | HatcheryError, address: RegExp) {
  expect(res).toBeInstanceOf(HatcheryError);
  const err = res as HatcheryError;
  expect(err.code).toBe('TOOL');
  expect(err.message).toMatch(/http_request: refused /);
  expect(err.message).toMatch(address);
  expect(err.message).toMatch(/--allow-host .*--allow-private-network/);
}

describe('http_request refuses this machine and the local network by default', () => {
  it('refuses loopback in every spelling, before any byte reaches the server', async () => {
    const p = target.port;
    const urls = [
      `http://127.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://2130706433:${p}/`, // decimal
      `http://0x7f.0.0.1:${p}/`, // hex
      `http://0177.0.0.1:${p}/`, // octal
      `http://[::ffff:127.0.0.1]:${p}/`, // IPv4-mapped IPv6
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[::1]:${p}/`,
      `http://0.0.0.0:${p}/`,
      `http://[::]:${p}/`,
    ];
    for (const url of urls) expectRefused(await fetchAs(url), /a (loopback|unspecified.*) address/);
    expect(target.hits).toEqual([]);
  });

  it('checks names after resolving them: localhost resolves to loopback', async () => {
    for (const host of ['localhost', 'LOCALHOST']) {
      const res = await fetchAs(`http://${host}:${target.port}/`);
      expectRefused(res, /is (127\.0\.0\.1|::1), a loopback address/);
    }
    expect(target.hits).toEqual([]);
  });

  it('refuses cloud metadata, private, CGNAT and multicast addresses', async () => {
    const cases: [string, RegExp][] = [
      ['http://169.254.169.254/latest/meta-data/', /link-local \(cloud metadata\)/],
      ['http://[fd00:ec2::254]/', /unique local/],
      ['http://10.0.0.1/', /a private address/],
      ['http://172.16.5.4/', /a private address/],
      ['http://192.168.1.1/', /a private address/],
      ['http://100.64.0.1/', /carrier-grade NAT/],
      ['http://224.0.0.1/', /multicast/],
      ['http://[fe80::1]/', /link-local/],
    ];
    for (const [url, range] of cases) expectRefused(await fetchAs(url), range);
  });

  it('re-checks every redirect: an allowed server cannot bounce the call into loopback or metadata', async () => {
    const allowHosts = [`127.0.0.1:${bouncer.port}`];
    expectRefused(
      await fetchAs(`http://127.0.0.1:${bouncer.port}/to-second`, { allowHosts }),
      /127\.0\.0\.1/,
    );
    expectRefused(await fetchAs(`http://127.0.0.1:${bouncer.port}/to-localhost`, { allowHosts }), /loopback/);
    expectRefused(
      await fetchAs(`http://127.0.0.1:${bouncer.port}/to-metadata`, { allowHosts }),
      /169\.254\.169\.254/,
    );
    expect(second.hits).toEqual([]);
    expect(bouncer.hits).toEqual(['/to-second', '/to-localhost', '/to-metadata']);
    // A redirect to an allowed place is followed; endless ones stop.
    expect(await fetchAs(`http://127.0.0.1:${bouncer.port}/to-self`, { allowHosts })).toBe('bouncer /done');
    const loop = await fetchAs(`http://127.0.0.1:${bouncer.port}/loop`, { allowHosts });
    expect((loop as HatcheryError).message).toMatch(/more than 5 redirects/);
  });
});

describe('opting in', () => {
  it('--allow-host opens exactly that host and port', async () => {
    const allowHosts = [`127.0.0.1:${target.port}`];
    expect(await fetchAs(`http://127.0.0.1:${target.port}/a`, { allowHosts })).toBe('target /a');
    // The same address through another spelling is the same host after URL normalisation.
    expect(await fetchAs(`http://2130706433:${target.port}/b`, { allowHosts })).toBe('target /b');
    expectRefused(await fetchAs(`http://127.0.0.1:${second.port}/`, { allowHosts }), /loopback/);
    expect(await fetchAs(`http://localhost:${target.port}/c`, { allowHosts: ['localhost'] })).toBe(
      'target /c',
    );
    expect(target.hits).toEqual(['/a', '/b', '/c']);
    expect(second.hits).toEqual([]);
  });

  it('--allow-private-network opens every address, redirects included', async () => {
    const tools = { allowPrivateNetwork: true };
    expect(await fetchAs(`http://127.0.0.1:${target.port}/x`, tools)).toBe('target /x');
    expect(await fetchAs(`http://localhost:${target.port}/y`, tools)).toBe('target /y');
    expect(await fetchAs(`http://127.0.0.1:${bouncer.port}/to-second`, tools)).toBe('second /secret');
  });

  it('the CLI flags reach the tool', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'get.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'get',
        desc: 'd',
        nodes: [
          {
            type: 'tool',
            tool_name: 'http_request',
            tool_args: { url: `http://127.0.0.1:${target.port}/cli` },
          },
        ],
      }),
    );
    const run = async (...flags: string[]) => {
      const r = await runCli(['run', file, '-q', ...flags]);
      return { code: r.code, out: r.stdout, err: r.stderr };
    };
    const refused = await run();
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`--allow-host 127.0.0.1:${target.port}`);
    expect(target.hits).toEqual([]);
    expect((await run('--allow-host', `127.0.0.1:${target.port}`)).out).toBe('target /cli\n');
    expect((await run('--allow-private-network')).out).toBe('target /cli\n');
    const bad = await run('--allow-host', 'http://127.0.0.1/');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--allow-host expects a host name');
  });
});

describe('http_request over node:http', () => {
  it('decodes compressed bodies, and a timeout ends a request that never answers', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/gz') {
        res.writeHead(200, { 'content-encoding': 'gzip' });
        res.end(gzipSync('compressed text'));
      }
      // Any other path: never answer.
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const tools = { allowHosts: [base.slice('http://'.length)] };
      expect(await fetchAs(`${base}/gz`, tools)).toBe('compressed text');
      const h = loadIn(tempDir(), {
        name: 'hang',
        desc: 'd',
        nodes: [
          { type: 'tool', tool_name: 'http_request', tool_args: { url: `${base}/hang` }, timeout_ms: 300 },
        ],
      });
      // /hang never answers: the run settles only through timeout_ms.
      const err = await new Runtime({ env: {}, tools }).run(h).catch((e: unknown) => e);
      expect((err as HatcheryError).code).toBe('TIMEOUT');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('address classification', () => {
  it('knows the blocked ranges and leaves public addresses alone', () => {
    for (const a of [
      '127.0.0.1',
      '127.255.255.254',
      '10.1.2.3',
      '169.254.169.254',
      '100.127.255.255',
      '255.255.255.255',
      '::1',
      '::',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      'fc00::1',
      'fe80::1%lo',
      'ff02::1',
    ]) {
      expect(blockedRange(a), a).toBeDefined();
    }
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      expect(blockedRange(a), a).toBeUndefined();
    }
  });

  it('matches allow entries by normalised host, port and *.domain', () => {
    const u = (s: string) => new URL(s);
    expect(hostAllowed(u('http://api.internal:8080/'), ['api.internal'])).toBe(true);
    expect(hostAllowed(u('http://api.internal:8080/'), ['api.internal:8080'])).toBe(true);
    expect(hostAllowed(u('http://api.internal:8081/'), ['api.internal:8080'])).toBe(false);
    expect(hostAllowed(u('http://api.internal/'), ['api.internal:80'])).toBe(true);
    expect(hostAllowed(u('https://api.internal/'), ['api.internal:80'])).toBe(false);
    expect(hostAllowed(u('http://a.b.corp/'), ['*.corp'])).toBe(true);
    expect(hostAllowed(u('http://corp/'), ['*.corp'])).toBe(false);
    expect(hostAllowed(u('http://evilcorp/'), ['*.corp'])).toBe(false);
    expect(hostAllowed(u('http://[::1]:9/'), ['::1'])).toBe(true);
    expect(hostAllowed(u('http://[::1]:9/'), ['[::1]:9'])).toBe(true);
    expect(hostAllowed(u('http://127.0.0.1/'), ['0x7f.0.0.1'])).toBe(true);
  });
});
