/**
 * The A2A endpoints are guarded as /mcp is: every A2A path (agent cards included) needs the bearer
 * token, a non-loopback address without a token refuses to start, --a2a needs --http, request
 * bodies are capped by --max-body; --a2a-only serves no MCP; and a server without --a2a never loads
 * the A2A SDK nor Express.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, startCli, tempDir } from '../helpers.js';
import { echoDef, hatcheryDir, waitFor, writeHatchery } from '../mcp/helpers.js';
import {
  artifactText,
  authFetch,
  type Served,
  send,
  serveA2a,
  TOKEN,
  userMessage,
  v1Client,
} from './helpers.js';

const SEND = {
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
};

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('A2A behind the HTTP guards', () => {
  let served: Served;
  let dir: string;

  beforeAll(async () => {
    dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
    served = await serveA2a(dir, { args: ['--a2a', '--max-body', '64KiB', '--no-journal'] });
  });

  afterAll(async () => {
    await served?.stop();
  });

  it('answers 401 without the token or with a wrong one, on task methods and agent cards', async () => {
    const sent: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }];
    for (const headers of sent) {
      const r = await post(`${served.origin}/a2a`, SEND, headers);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="hatchery-mcp"/);
      expect(await r.text()).toContain('Authorization: Bearer <token>');
      const paths = [
        '/.well-known/agent-card.json',
        '/a2a/shout/.well-known/agent-card.json',
        `/a2a/rest/tasks/${crypto.randomUUID()}`,
      ];
      for (const card of paths) {
        expect((await fetch(`${served.origin}${card}`, { headers })).status).toBe(401);
      }
    }
    const secret = await post(`${served.origin}/a2a/shout`, SEND, { authorization: `Bearer ${TOKEN}` });
    expect(secret.status).toBe(200);
    expect(JSON.stringify(await secret.json())).not.toContain(TOKEN);
  });

  it('declares the bearer scheme on its cards, in the JSON of each version, and runs a task with the token', async () => {
    const cardUrl = `${served.origin}/a2a/shout/.well-known/agent-card.json`;
    const card = (await (
      await fetch(cardUrl, { headers: { authorization: `Bearer ${TOKEN}`, 'a2a-version': '1.0' } })
    ).json()) as Record<string, unknown> & { skills: { id: string }[] };
    expect(card.skills.map((s) => s.id)).toEqual(['shout']);
    // ProtoJSON, as A2A 1.0 writes a oneof: the field's name, never the SDK's {$case, value}.
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    });
    // A requirement of no scopes: ProtoJSON leaves the empty list out.
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }]);
    expect(JSON.stringify(card)).not.toContain('$case');
    // The SDK's own resolver reads the scheme back (it dropped the {$case} shape).
    const resolved = await new DefaultAgentCardResolver({ fetchImpl: authFetch() }).resolve(cardUrl, '');
    expect(resolved.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer' },
    });
    // A 0.3 client gets the 0.3 shape of the same scheme.
    const legacy = (await (
      await fetch(cardUrl, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { securitySchemes: unknown; security: unknown };
    expect(legacy.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'Bearer' }),
    });
    const client = await v1Client(`${served.origin}/a2a/`);
    const task = await client.sendMessage(send(userMessage({ text: 'hey' })));
    expect(artifactText(task as never)).toBe('!hey');
    // The token is a secret: an output that carries it (here, echoed) shows it redacted.
    const leak = await client.sendMessage(send(userMessage({ text: `token ${TOKEN}` })));
    expect(artifactText(leak as never)).toBe('!token [redacted]');
  });

  it('refuses a foreign Host or Origin (DNS rebinding) with 403, as on /mcp', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const page = await post(`${served.origin}/a2a`, SEND, { ...auth, origin: 'http://evil.example' });
    expect(page.status).toBe(403);
    const card = await fetch(`${served.origin}/.well-known/agent-card.json`, {
      headers: { ...auth, origin: 'http://evil.example' },
    });
    expect(card.status).toBe(403);
  });

  it('gives a 0.3 client (no A2A-Version header) the 0.3 shape of the card', async () => {
    const r = await fetch(`${served.origin}/.well-known/agent-card.json`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const card = (await r.json()) as { url?: string; preferredTransport?: string; protocolVersion?: string };
    expect(card.url).toBe(`${served.origin}/a2a`);
    expect(card.preferredTransport).toBe('JSONRPC');
    expect(card.protocolVersion).toMatch(/^0\.3/);
  });

  it('names https in its cards behind a TLS proxy that says so (X-Forwarded-Proto, Forwarded)', async () => {
    const urls = async (headers: Record<string, string>) => {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const v1 = (await (
        await fetch(`${served.origin}/.well-known/agent-card.json`, {
          headers: { ...auth, 'a2a-version': '1.0', ...headers },
        })
      ).json()) as { supportedInterfaces: { url: string }[] };
      const legacy = (await (
        await fetch(`${served.origin}/a2a/shout/.well-known/agent-card.json`, {
          headers: { ...auth, ...headers },
        })
      ).json()) as { url: string };
      return [...new Set(v1.supportedInterfaces.map((i) => i.url)), legacy.url];
    };
    const host = new URL(served.origin).host;
    expect(await urls({ 'x-forwarded-proto': 'https' })).toEqual([
      `https://${host}/a2a`,
      `https://${host}/a2a/rest`,
      `https://${host}/a2a/shout`,
    ]);
    expect((await urls({ forwarded: 'for=192.0.2.7;proto=https;by=proxy' }))[0]).toBe(`https://${host}/a2a`);
    // Nothing but http and https: the header cannot put another scheme into a card.
    expect((await urls({ 'x-forwarded-proto': 'javascript' }))[0]).toBe(`http://${host}/a2a`);
    expect((await urls({}))[0]).toBe(`http://${host}/a2a`);
  });

  it('caps request bodies with --max-body, and answers unknown hatcheries and paths with 404', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const big = await post(`${served.origin}/a2a`, { ...SEND, pad: 'x'.repeat(70_000) }, auth);
    expect(big.status).toBe(413);
    expect(await big.text()).toContain('--max-body');
    const unknown = await post(`${served.origin}/a2a/shuot`, SEND, auth);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('did you mean \\"shout\\"');
    expect((await post(`${served.origin}/a2a`, '{not json', auth)).status).toBe(400);
  });
});

describe('serving A2A: start-up rules', () => {
  it('refuses a non-loopback address without a token, and --a2a without --http', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    for (const flag of ['--a2a', '--a2a-only']) {
      const open = await runCli(['serve', '--dir', dir, '--http', '0.0.0.0:0', flag, '--no-journal']);
      expect(open.code).toBe(2);
      expect(open.stderr).toContain('without a token');
      expect(open.stderr).not.toContain('listening on');
      const stdio = await runCli(['serve', '--dir', dir, flag, '--no-journal']);
      expect(stdio.code).toBe(2);
      expect(stdio.stderr).toContain(`${flag} only applies with --http`);
    }
  });

  it('--a2a-only serves A2A and no MCP', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', '>'));
    const served = await serveA2a(dir, { args: ['--a2a-only', '--no-journal'] });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const mcp = await post(`${served.origin}/mcp`, { jsonrpc: '2.0', id: 0, method: 'ping' }, auth);
      expect(mcp.status).toBe(404);
      expect(served.cli.err()).toMatch(/listening on http:\S+\/a2a/);
      const client = await v1Client(`${served.origin}/a2a/`);
      expect(artifactText((await client.sendMessage(send(userMessage({ text: 'x' })))) as never)).toBe('>x');
    } finally {
      await served.stop();
    }
  });
});

describe('loading the A2A server', () => {
  const REGISTER = path.join(REPO_ROOT, 'test', 'fixtures', 'loads', 'register.mjs');

  /** The A2A SDK's and Express's modules a served folder loaded while it answered one request. */
  async function loadedBy(args: string[]): Promise<string[]> {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    const log = path.join(tempDir('hatchery-loads-'), 'loads.txt');
    const cli = startCli(['serve', '--dir', dir, '--http', '127.0.0.1:0', '--no-journal', ...args], {
      env: { HATCHERY_TEST_LOADS: log, NODE_OPTIONS: `--import ${REGISTER}` },
    });
    const url = await waitFor(
      () => /listening on (http:\S+)/.exec(cli.err())?.[1],
      15_000,
      'the listening line',
    );
    await fetch(new URL('/.well-known/agent-card.json', url)).then((r) => r.text());
    cli.child.kill('SIGTERM');
    expect(await cli.exit).toBe(0);
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => /\/node_modules\/(@a2a-js\/sdk|express)\/|\/dist\/mcp\/a2a\//.test(l));
  }

  it('imports neither the A2A SDK nor Express without --a2a, and both with it', async () => {
    expect(await loadedBy([])).toEqual([]);
    const loaded = await loadedBy(['--a2a']);
    expect(loaded.some((l) => l.includes('/node_modules/@a2a-js/sdk/'))).toBe(true);
    expect(loaded.some((l) => l.includes('/node_modules/express/'))).toBe(true);
  });
});
