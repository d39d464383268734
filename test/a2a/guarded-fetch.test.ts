/**
 * The fetch the A2A client is given: the network guard on every connection, redirects within one
 * origin only, a cap on what is read, and credentials for the agent's own origin only.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/tools/builtin/guarded-fetch.js';

/** A loopback server answering by path; records what it was sent. */
class Site {
  readonly seen: IncomingMessage[] = [];
  url = '';
  private server: Server;
  constructor(route: (path: string) => { status?: number; headers?: Record<string, string>; body?: string }) {
    this.server = createServer((req, res) => {
      this.seen.push(req);
      const r = route(req.url ?? '/');
      res.writeHead(r.status ?? 200, r.headers ?? { 'content-type': 'application/json' });
      res.end(r.body ?? '');
    });
  }
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

const other = new Site(() => ({ body: '{"other":true}' }));
const site = new Site((p) => {
  if (p === '/moved') return { status: 302, headers: { location: '/card.json' } };
  if (p === '/away') return { status: 307, headers: { location: `${other.url}/card.json` } };
  if (p === '/huge') return { body: 'x'.repeat(5000) };
  return { body: '{"ok":true}' };
});

beforeAll(async () => {
  await Promise.all([site.start(), other.start()]);
});
afterAll(async () => {
  await Promise.all([site.stop(), other.stop()]);
});

const policy = () => ({ allowHosts: [new URL(site.url).host, new URL(other.url).host] });

describe('guardedFetch', () => {
  it('refuses this machine unless the operator allowed it', async () => {
    const f = guardedFetch({}, { who: 'A2A agent "x"' });
    await expect(f(`${site.url}/card.json`)).rejects.toThrow(/A2A agent "x": refused .* loopback address/);
    expect(await (await guardedFetch(policy(), { who: 'x' })(`${site.url}/card.json`)).json()).toEqual({
      ok: true,
    });
  });

  it('follows a redirect within the origin and refuses one to another host', async () => {
    const f = guardedFetch(policy(), { who: 'A2A agent "x"' });
    expect(await (await f(`${site.url}/moved`)).json()).toEqual({ ok: true });
    const before = other.seen.length;
    await expect(f(`${site.url}/away`)).rejects.toThrow(
      /redirected to http:\/\/127\.0\.0\.1:\d+, another host; redirects are followed only within one host/,
    );
    expect(other.seen.length).toBe(before);
  });

  it('fails a body larger than the cap instead of reading it all', async () => {
    const f = guardedFetch(policy(), { who: 'x', limitBytes: 1000 });
    const res = await f(`${site.url}/huge`);
    await expect(res.text()).rejects.toThrow();
  });

  it("sends the entry's headers to its own origin only", async () => {
    const f = guardedFetch(policy(), {
      who: 'x',
      headers: { Authorization: 'Bearer only-for-site' },
      origin: site.url,
    });
    await f(`${site.url}/card.json`, { headers: { 'A2A-Version': '1.0' } });
    await f(`${other.url}/rpc`, { method: 'POST', body: '{}' });
    expect(site.seen.at(-1)!.headers.authorization).toBe('Bearer only-for-site');
    expect(site.seen.at(-1)!.headers['a2a-version']).toBe('1.0');
    expect(other.seen.at(-1)!.headers.authorization).toBeUndefined();
  });
});
