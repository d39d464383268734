import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createNodeFetch, nodeFetch } from '../../src/providers/node-fetch.js';

// The transport every OpenAI and Anthropic client of hatchery-mcp uses (the SDK tests in this folder
// run through it too). Here: what a plain server on loopback sees of it, and how it takes a server
// that misbehaves.

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
let handler: Handler = (_req, res) => res.end('unset');
const sockets = new Set<Socket>();
let connections = 0;
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
});
server.on('connection', (s: Socket) => {
  connections++;
  sockets.add(s);
  s.once('close', () => sockets.delete(s));
});
let base = '';

beforeAll(async () => {
  // No Keep-Alive header of its own: a test says when it wants one.
  server.keepAliveTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});
afterEach(() => {
  connections = 0;
});

const until = async (ok: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('nodeFetch, the model SDKs’ transport', () => {
  it('sends the method, headers and body as given, and answers with status, headers and body', async () => {
    let seen: { method?: string; headers: http.IncomingHttpHeaders; body: string } | undefined;
    handler = (req, res, body) => {
      seen = { method: req.method, headers: req.headers, body };
      res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-request-id': 'req_1' });
      res.end(JSON.stringify({ got: JSON.parse(body) }));
    };
    const headers = new Headers({ authorization: 'Bearer sk-test', 'content-type': 'application/json' });
    const res = await nodeFetch(`${base}/v1/chat?x=1`, { method: 'POST', headers, body: '{"ü":1}' });
    expect(seen?.method).toBe('POST');
    expect(seen?.headers.authorization).toBe('Bearer sk-test');
    expect(seen?.headers['content-length']).toBe(String(Buffer.byteLength('{"ü":1}')));
    expect(seen?.body).toBe('{"ü":1}');
    expect([res.status, res.statusText, res.ok]).toEqual([201, 'Made', true]);
    expect(res.headers.get('x-request-id')).toBe('req_1');
    expect(await res.json()).toEqual({ got: { ü: 1 } });
  });

  it('keeps one connection for calls one after another, and closes it once idle', async () => {
    const used = new Set<Socket>();
    handler = (req, res) => {
      used.add(req.socket);
      res.end('ok');
    };
    const f = createNodeFetch({ idleTimeoutMs: 150 });
    for (let i = 0; i < 3; i++)
      expect(await (await f(`${base}/`, { method: 'POST', body: 'x' })).text()).toBe('ok');
    expect([connections, used.size]).toEqual([1, 1]);
    const [socket] = used;
    await until(() => socket!.destroyed);
  });

  it('keeps a connection as long as the server says, less a second, and not at all when that is nothing', async () => {
    const used: Socket[] = [];
    let hint = 'timeout=2';
    handler = (req, res) => {
      used.push(req.socket);
      res.setHeader('keep-alive', hint);
      res.end('ok');
    };
    const f = createNodeFetch({ idleTimeoutMs: 60_000 });
    await (await f(`${base}/`)).text();
    const t0 = Date.now();
    await until(() => used[0]!.destroyed);
    // Closed by the client after 2 s - 1 s, not after its own 60 s.
    expect(Date.now() - t0).toBeGreaterThan(700);
    hint = 'timeout=1';
    await (await f(`${base}/`)).text();
    await (await f(`${base}/`)).text();
    expect(new Set(used.slice(1)).size).toBe(2);
  });

  it('a reply slower than the idle timeout still arrives', async () => {
    handler = (_req, res) => setTimeout(() => res.end('late'), 400);
    const f = createNodeFetch({ idleTimeoutMs: 100 });
    expect(await (await f(`${base}/`, { method: 'POST', body: 'x' })).text()).toBe('late');
  });

  it.each([
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync],
  ] as const)('decodes a %s body', async (encoding, encode) => {
    const text = JSON.stringify({ text: 'hello '.repeat(1000) });
    handler = (_req, res) => {
      res.writeHead(200, { 'content-encoding': encoding, 'content-type': 'application/json' });
      res.end(encode(text));
    };
    expect(await (await nodeFetch(`${base}/`)).text()).toBe(text);
  });

  it('hands over server-sent events as they come, before the stream ends', async () => {
    let finish = () => {};
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      finish = () => res.end('data: two\n\n');
    };
    const res = await nodeFetch(`${base}/`, { method: 'POST', body: '{}' });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    finish();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('follows a redirect with the body sent again', async () => {
    handler = (req, res, body) => {
      if (req.url === '/old') {
        res.writeHead(307, { location: '/new' });
        res.end();
      } else res.end(`${req.url} ${body}`);
    };
    expect(await (await nodeFetch(`${base}/old`, { method: 'POST', body: 'payload' })).text()).toBe(
      '/new payload',
    );
  });

  it('gives a 204 reply a null body', async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    const res = await nodeFetch(`${base}/`);
    expect([res.status, res.body]).toEqual([204, null]);
  });

  it('an abort before the reply rejects with an AbortError and closes the connection', async () => {
    let asked: Socket | undefined;
    handler = (req) => {
      asked = req.socket; // and never answers
    };
    const c = new AbortController();
    const pending = nodeFetch(`${base}/`, { method: 'POST', body: 'x', signal: c.signal }).then(
      () => new Error('expected a rejection'),
      (e: unknown) => e as Error,
    );
    await until(() => asked !== undefined);
    c.abort(new Error('caller gave up'));
    const err = await pending;
    expect(err.name).toBe('AbortError');
    expect((err.cause as Error).message).toBe('caller gave up');
    await until(() => asked!.destroyed);
  });

  it('an abort in the middle of the body rejects with an AbortError', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
    };
    const c = new AbortController();
    // As with fetch, the response comes with its head; reading the body is what fails.
    const got = nodeFetch(`${base}/`, { signal: c.signal })
      .then((r) => r.text())
      .then(
        () => new Error('expected a rejection'),
        (e: unknown) => e as Error,
      );
    await new Promise((r) => setTimeout(r, 50));
    c.abort();
    expect((await got).name).toBe('AbortError');
  });

  it('an already aborted signal sends nothing', async () => {
    handler = (_req, res) => res.end('should not be asked');
    const err = (await nodeFetch(`${base}/`, { signal: AbortSignal.abort() }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.name).toBe('AbortError');
    expect(connections).toBe(0);
  });

  it('a connection cut in the middle of the body rejects instead of hanging', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":', () => res.socket?.destroy());
    };
    await expect(nodeFetch(`${base}/`).then((r) => r.text())).rejects.toThrow();
  });

  it('a gzip body cut in the middle rejects instead of hanging', async () => {
    const zipped = zlib.gzipSync('x'.repeat(100_000));
    handler = (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(zipped.length) });
      res.write(zipped.subarray(0, 50), () => res.socket?.destroy());
    };
    await expect(nodeFetch(`${base}/`).then((r) => r.text())).rejects.toThrow();
  });

  it('a status outside 200-599 (a misbehaving server) is a rejection naming it, not a crash', async () => {
    const raw = net.createServer((s) =>
      s.once('data', () => s.end('HTTP/1.1 999 Odd\r\ncontent-length: 2\r\n\r\nhi')),
    );
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    try {
      const port = (raw.address() as AddressInfo).port;
      await expect(nodeFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(/HTTP status 999/);
    } finally {
      await new Promise((r) => raw.close(r));
    }
  });

  it('a refused connection rejects with ECONNREFUSED, which the SDK errors name', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(nodeFetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a header value with a line break is a rejection, not a throw', async () => {
    let pending: Promise<Response> | undefined;
    expect(() => {
      pending = nodeFetch(`${base}/`, { headers: { 'x-bad': 'a\r\nInjected: 1' } });
    }).not.toThrow();
    await expect(pending).rejects.toThrow();
    expect(connections).toBe(0);
  });
});

describe('what nodeFetch leaves to the global fetch', () => {
  const realFetch = globalThis.fetch;
  const handed: string[] = [];
  afterEach(() => {
    globalThis.fetch = realFetch;
    handed.length = 0;
    delete process.env.NODE_USE_ENV_PROXY;
  });
  const recordHandOver = () => {
    globalThis.fetch = ((input: string) => {
      handed.push(String(input));
      return Promise.resolve(new Response('via fetch'));
    }) as typeof fetch;
  };

  it('uploads, other schemes and NODE_USE_ENV_PROXY (Node 24 proxies fetch then)', async () => {
    handler = (_req, res) => res.end('via node:http');
    recordHandOver();
    const stream = new ReadableStream({ start: (c) => c.close() });
    await nodeFetch(`${base}/a`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    await nodeFetch(`${base}/b`, { method: 'POST', body: new FormData() });
    await nodeFetch('data:text/plain,hi');
    process.env.NODE_USE_ENV_PROXY = '1';
    await nodeFetch(`${base}/c`);
    delete process.env.NODE_USE_ENV_PROXY;
    expect(await (await nodeFetch(`${base}/d`)).text()).toBe('via node:http');
    expect(handed).toEqual([`${base}/a`, `${base}/b`, 'data:text/plain,hi', `${base}/c`]);
  });

  it('a proxy set up as fetch’s global dispatcher still gets every request', async () => {
    const key = Symbol.for('undici.globalDispatcher.1');
    const g = globalThis as Record<symbol, unknown>;
    await realFetch(`${base}/warm`).then((r) => r.text()); // Node installs its default dispatcher
    const before = g[key];
    const proxied: string[] = [];
    class ProxyAgent {
      dispatch(opts: { origin: string; path: string }, handlers: { onError(e: Error): void }) {
        proxied.push(`${opts.origin}${opts.path}`);
        handlers.onError(new Error('refused by the test proxy'));
        return true;
      }
      close() {}
      destroy() {}
    }
    g[key] = new ProxyAgent();
    try {
      await expect(nodeFetch(`${base}/secret`)).rejects.toThrow();
      expect(proxied).toEqual([`${base}/secret`]);
    } finally {
      g[key] = before;
    }
  });
});

describe('nodeFetch over TLS', () => {
  let dir = '';
  let tls: https.Server | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'hatchery-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    tls = https.createServer(
      { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) },
      (_req, res) => res.end('secret reply'),
    );
    await new Promise<void>((r) => tls!.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise((r) => (tls ? tls.close(r) : r(undefined)));
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a server whose certificate no trusted authority signed', async () => {
    const port = (tls!.address() as AddressInfo).port;
    await expect(nodeFetch(`https://127.0.0.1:${port}/`)).rejects.toMatchObject({
      code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    });
  });
});
