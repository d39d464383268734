/**
 * The HTTP server as a client on another machine meets it: a missing or wrong token is answered so
 * that clients say what is wrong (401, WWW-Authenticate, a body that says how to pass the token), the
 * OAuth discovery that SDK clients start on any 401 ends on that same explanation, and request
 * bodies are capped by --max-body with a message naming the option.
 */
import { request } from 'node:http';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesOption } from '../../src/cli/args.js';
import { formatBinaryBytes, parseBytes } from '../../src/core/bytes.js';
import { type CliProcess, runCli, startCli } from '../helpers.js';
import { echoDef, hatcheryDir, textOf, waitFor, writeHatchery } from './helpers.js';

const TOKEN = 'tok-3f9a1c0d5e7b42a8';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** An OAuth client provider like mcp-remote's: it would register and open a browser if asked to. */
function oauthProvider(log: string[]) {
  return {
    get redirectUrl() {
      return 'http://127.0.0.1:1/callback';
    },
    get clientMetadata() {
      return { client_name: 'test', redirect_uris: ['http://127.0.0.1:1/callback'] };
    },
    clientInformation: () => undefined,
    saveClientInformation: () => {
      log.push('registered');
    },
    tokens: () => undefined,
    saveTokens: () => {
      log.push('tokens');
    },
    redirectToAuthorization: () => {
      log.push('browser');
    },
    saveCodeVerifier: () => {},
    codeVerifier: () => 'verifier',
  };
}

describe('HTTP with --token and --max-body, from the CLI', () => {
  let cli: CliProcess;
  let url: string;

  beforeAll(async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
    cli = startCli(
      [
        ...['--dir', dir, '--http', '127.0.0.1:0', '--no-journal', '--max-body', '64KiB'],
        ...['--public-host', 'mcp.proxy.test'],
      ],
      { env: { HATCHERY_MCP_TOKEN: TOKEN } },
    );
    url = await waitFor(() => /listening on (http:\S+)/.exec(cli.err())?.[1], 15_000, 'the listening line');
  }, 20_000);
  afterAll(async () => {
    cli.child.kill('SIGTERM');
    await cli.exit;
  });

  const post = (headers: Record<string, string>, body: unknown = INITIALIZE) =>
    fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) });

  it('answers a request without a token with 401, a bare Bearer challenge and how to pass the token', async () => {
    const r = await post({});
    expect(r.status).toBe(401);
    const challenge = r.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="hatchery-mcp"/);
    // RFC 6750 3.1: no error code when no credentials were sent; no OAuth metadata to discover.
    expect(challenge).not.toMatch(/error="/);
    expect(challenge).not.toMatch(/resource_metadata/);
    const body = (await r.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/^no bearer token was sent; .*static bearer token, not OAuth/);
    expect(body.error.message).toContain('"Authorization: Bearer <token>"');
    expect(body.error.message).toContain('HATCHERY_MCP_TOKEN');
    expect(body.error.message).not.toContain(TOKEN);
  });

  it('answers a wrong token with error="invalid_token", and never echoes the server token', async () => {
    for (const auth of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'bearer nope']) {
      const r = await post({ authorization: auth });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(
        /^Bearer realm="hatchery-mcp", error="invalid_token"/,
      );
      const text = await r.text();
      expect(text).toContain('the bearer token sent is wrong');
      expect(text).not.toContain(TOKEN);
    }
    // Another scheme is no bearer token at all.
    const basic = await post({ authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` });
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).not.toMatch(/error="/);
  });

  it('accepts the Host of a proxy named by --public-host, and no other name', async () => {
    const withHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(url);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            path: u.pathname,
            method: 'POST',
            headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}`, host },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(INITIALIZE));
      });
    expect(await withHost('mcp.proxy.test')).toBe(200);
    expect(await withHost('mcp.proxy.test:443')).toBe(200);
    expect(await withHost('evil.example')).toBe(403);
    expect(await withHost('mcp.proxy.test.evil.example')).toBe(403);
    const bad = await runCli([
      '--dir',
      'x',
      '--http',
      '127.0.0.1:0',
      '--public-host',
      'https://a.test:8443/mcp',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--public-host "https://a.test:8443/mcp": give a host name only');
    const stdio = await runCli(['--dir', 'x', '--public-host', 'a.test']);
    expect(stdio.stderr).toContain('--public-host only applies with --http');
  });

  it('serves a client that sends the right token', async () => {
    const r = await post({ authorization: `Bearer ${TOKEN}` });
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeTruthy();
  });

  it('answers OAuth discovery with 404 and registration with 401, each explaining the static token', async () => {
    const origin = new URL(url).origin;
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/mcp',
      '/.well-known/openid-configuration',
    ]) {
      const r = await fetch(origin + path);
      expect(r.status, path).toBe(404);
      const body = (await r.json()) as { error: string; error_description: string };
      expect(body.error, path).toBe('invalid_token');
      expect(body.error_description, path).toMatch(/static bearer token, not OAuth/);
    }
    for (const [method, path] of [
      ['POST', '/register'],
      ['GET', '/authorize'],
      ['POST', '/token'],
    ] as const) {
      const r = await fetch(origin + path, { method, headers: { 'content-type': 'application/json' } });
      expect(r.status, path).toBe(401);
      const body = (await r.json()) as { error_description: string };
      expect(body.error_description).toContain('Authorization: Bearer <token>');
    }
    // Other paths are still not found, and say where the endpoint is.
    const other = await fetch(`${origin}/.well-known/other`);
    expect(other.status).toBe(404);
    expect(await other.text()).toContain('the MCP endpoint is /mcp');
  });

  it('leads an SDK client with OAuth support (as mcp-remote) to the explanation, without a login', async () => {
    const log: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: oauthProvider(log) });
    const client = new Client({ name: 'like-mcp-remote', version: '1' });
    const err = await client.connect(transport).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/static bearer token, not OAuth/);
    expect(err?.message).toContain('--header "Authorization: Bearer <token>"');
    // mcp-remote starts a browser login on "Unauthorized" and a transport fallback on "Not Found".
    expect(err?.message).not.toMatch(/Unauthorized|Not Found|404/);
    expect(log).toEqual([]);
    await client.close();
  });

  it('a v2 SDK client (both eras) reports the rejected registration with the explanation as its text', async () => {
    for (const mode of [undefined, { pin: '2026-07-28' as const }]) {
      const log: string[] = [];
      const client = new ClientV2({ name: 'v2', version: '1' }, mode ? { versionNegotiation: { mode } } : {});
      const transport = new StreamableHTTPClientTransportV2(new URL(url), {
        authProvider: oauthProvider(log),
      });
      const err = await client.connect(transport).then(
        () => undefined,
        (e: Error) => e,
      );
      // The v2 SDK always tries registration after a 401; the rejection carries this server's answer.
      expect(err?.message).toMatch(
        /^Dynamic Client Registration rejected \(HTTP 401\): .*static bearer token, not OAuth/,
      );
      expect(log).toEqual([]);
      await client.close();
    }
  });

  it('the same client with the token in its headers works', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      authProvider: oauthProvider([]),
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    const client = new Client({ name: 'like-mcp-remote', version: '1' });
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'shout', arguments: { input: 'hi' } }))).toBe('!hi');
    await client.close();
  });

  it('a 2026-07-28 client (stateless) with the token works, and its oversize request gets the same 413', async () => {
    const client = new ClientV2(
      { name: 'modern', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransportV2(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    expect(textOf(await client.callTool({ name: 'shout', arguments: { input: 'now' } }))).toBe('!now');
    const big = client.callTool({ name: 'shout', arguments: { input: 'z'.repeat(65 * 1024) } });
    await expect(big).rejects.toThrow(/413|over the limit of 64 KiB \(--max-body\)/);
    await client.close();
    // The same request as raw HTTP: the body says which option to raise.
    const raw = await post(
      { authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': '2026-07-28' },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'shout',
          arguments: { input: 'z'.repeat(65 * 1024) },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
        },
      },
    );
    expect(raw.status).toBe(413);
    expect(await raw.text()).toContain('over the limit of 64 KiB (--max-body)');
  });

  it('refuses a body over --max-body with 413 naming the option, on initialize and inside a session', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const big = { ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(65 * 1024) } };
    const r = await post(auth, big);
    expect(r.status).toBe(413);
    const body = (await r.json()) as { error: { message: string } };
    expect(body.error.message).toBe('request body too large: over the limit of 64 KiB (--max-body)');

    const init = await post(auth);
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    const session = { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const call = (input: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'shout', arguments: { input } },
    });
    const under = await post(session, call('y'.repeat(60 * 1024)));
    expect(under.status).toBe(200);
    expect(await under.text()).toContain('!yyy');
    const over = await post(session, call('y'.repeat(65 * 1024)));
    expect(over.status).toBe(413);
    expect(await over.text()).toContain('over the limit of 64 KiB (--max-body)');
  });

  it('caps a chunked body that declares no length, and one whose Content-Length lies low', async () => {
    const send = (headers: Record<string, string | number>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}`, ...headers } },
          (res) => {
            let body = '';
            res.on('data', (b) => {
              body += b;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        // The server may close the connection before the whole body is written.
        req.on('error', (e) =>
          e.message.includes('EPIPE') || e.message.includes('ECONNRESET') ? undefined : reject(e),
        );
        for (let i = 0; i < 80; i++) req.write('x'.repeat(1024));
        req.end();
      });
    const chunked = await send({ 'transfer-encoding': 'chunked' });
    expect(chunked.status).toBe(413);
    expect(chunked.body).toContain('(--max-body)');
  });
});

describe('the size option', () => {
  it('reads bytes with binary units and writes the limit back in the largest whole unit', () => {
    expect(parseBytes('4194304')).toBe(4 * 1024 * 1024);
    expect(parseBytes('4MiB')).toBe(4 * 1024 * 1024);
    expect(parseBytes('512 KiB')).toBe(512 * 1024);
    expect(parseBytes('1g')).toBe(1024 ** 3);
    expect(parseBytes('1.5MiB')).toBe(1.5 * 1024 * 1024);
    for (const bad of ['', '4MB', '4 kb', '-1', 'MiB', '1e9', '4MiB4', '99999999999999999999'])
      expect(parseBytes(bad), bad).toBeUndefined();
    expect(formatBinaryBytes(4 * 1024 * 1024)).toBe('4 MiB');
    expect(formatBinaryBytes(1536 * 1024)).toBe('1536 KiB');
    expect(formatBinaryBytes(1000)).toBe('1000 bytes');
    expect(() => bytesOption('0', 'max-body')).toThrow(/--max-body must be a size in bytes/);
    expect(() => bytesOption('4MB', 'max-body')).toThrow(/4MiB/);
  });

  it('serve refuses a bad --max-body and --max-body without --http, as usage errors', async () => {
    const dir = hatcheryDir();
    const bad = await runCli(['serve', '--dir', dir, '--http', '0', '--max-body', '4MB']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-body must be a size in bytes, optionally with a unit/);
    const stdio = await runCli(['serve', '--dir', dir, '--max-body', '1MiB']);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toMatch(/--max-body only applies with --http/);
  });
});
