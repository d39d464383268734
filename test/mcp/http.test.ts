import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { serveHttp } from '../../src/mcp/http.js';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import {
  CLI,
  droneDef,
  EXAMPLES,
  echoDef,
  hatcheryDir,
  ROOT,
  textOf,
  waitFor,
  watchClient,
  writeHatchery,
} from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const TOKEN = 'test-token-0123456789';

async function httpServer(dir: string, token?: string) {
  const model = new ScriptedProvider(async (req) => {
    await new Promise((r) => setTimeout(r, 150));
    const last = req.messages.at(-1);
    return `model: ${last && 'content' in last ? last.content : ''}`;
  });
  const runtime = new Runtime({ providers: { openai: model }, env: {} });
  const core = await HatcheryMcpServer.start({
    dir,
    runtime,
    debounceMs: 30,
    heartbeatMs: 100,
    log: () => {},
  });
  const http = await serveHttp(core, { port: 0, token });
  cleanups.push(async () => {
    await core.close();
    await http.close();
  });
  return { core, http };
}

async function connect(url: string, token: string | undefined, setup?: (c: Client) => void, caps = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  const client = new Client({ name: 'http-test', version: '1.0.0' }, { capabilities: caps });
  const watch = watchClient(client);
  setup?.(client);
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, watch };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A raw HTTP POST (so Host, Origin and the session header can be set freely); an initialize by default. */
function rawPost(
  url: string,
  headers: Record<string, string>,
  message: unknown = INITIALIZE,
): Promise<{ status: number; body: string; sid?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (b) => {
          body += b;
        });
        res.on('end', () => {
          const sid = res.headers['mcp-session-id'];
          resolve({ status: res.statusCode ?? 0, body, ...(typeof sid === 'string' ? { sid } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

describe('Streamable HTTP', () => {
  it('serves tools to a client with the token, and refuses requests without it or from other sites', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
    const { http } = await httpServer(dir, TOKEN);
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client } = await connect(http.url, TOKEN);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('shout');
    expect(textOf(await client.callTool({ name: 'shout', arguments: { input: 'hey' } }))).toBe('!hey');

    const noToken = await rawPost(http.url, {});
    expect(noToken.status).toBe(401);
    const wrong = await rawPost(http.url, { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    const rebinding = await rawPost(http.url, { authorization: `Bearer ${TOKEN}`, host: 'evil.example:80' });
    expect(rebinding.status).toBe(403);
    const origin = await rawPost(http.url, {
      authorization: `Bearer ${TOKEN}`,
      origin: 'https://evil.example',
    });
    expect(origin.status).toBe(403);
    const local = await rawPost(http.url, {
      authorization: `Bearer ${TOKEN}`,
      origin: 'http://localhost:5173',
    });
    expect(local.status).toBe(200);
    const elsewhere = await rawPost(http.url.replace('/mcp', '/other'), { authorization: `Bearer ${TOKEN}` });
    expect(elsewhere.status).toBe(404);
  });

  it('sends list_changed, progress and sampling requests over the session streams', async () => {
    const dir = hatcheryDir();
    writeHatchery(
      dir,
      'ask.json',
      droneDef('ask', { nodes: [{ name: 'Ask', model: 'sampling', usr_prompt: '{{ ctx.input }}' }] }),
    );
    writeHatchery(dir, 'chain.json', {
      name: 'chain',
      desc: 'two drones',
      nodes: [
        { name: 'A', usr_prompt: '{{ ctx.input }}', next: 'B' },
        { name: 'B', usr_prompt: 'then {{ out.A }}' },
      ],
    });
    const { http } = await httpServer(dir);
    const { client, watch } = await connect(
      http.url,
      undefined,
      (c) =>
        c.setRequestHandler(CreateMessageRequestSchema, (req) => ({
          model: 'client-model',
          role: 'assistant',
          content: {
            type: 'text',
            text: `sampled: ${(req.params.messages[0]!.content as { text: string }).text}`,
          },
        })),
      { sampling: {} },
    );
    expect(textOf(await client.callTool({ name: 'ask', arguments: { input: 'over http' } }))).toBe(
      'sampled: over http',
    );
    const progress: Progress[] = [];
    const r = await client.callTool({ name: 'chain', arguments: { input: 'go' } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(textOf(r)).toBe('model: then model: go');
    expect(progress.map((p) => p.message)).toEqual(
      expect.arrayContaining(['step 1: A started', 'step 2: B started']),
    );
    writeHatchery(dir, 'late.json', echoDef('late'));
    await waitFor(() => watch.listChanged > 0, 10_000, 'list_changed over HTTP');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('late');
  });

  it('runs from the CLI with --http and HATCHERY_MCP_TOKEN, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, '--dir', EXAMPLES, '--http', '127.0.0.1:0'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HATCHERY_MCP_TOKEN: TOKEN },
    });
    let err = '';
    child.stderr.on('data', (b) => {
      err += b;
    });
    const exit = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const url = await waitFor(() => /listening on (http:\S+)/.exec(err)?.[1], 10_000, 'the listening line');
    expect(err).toMatch(/bearer token required/);
    expect(err).not.toContain(TOKEN);
    const { client } = await connect(url, TOKEN);
    const notes = await client.callTool({ name: 'read_notes', arguments: {} });
    expect(textOf(notes)).toMatch(/^# welcome\.md/);
    expect((await rawPost(url, {})).status).toBe(401);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});

describe('HTTP session expiry', () => {
  const post = (url: string, message: unknown, sid?: string) =>
    rawPost(url, sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } : {}, message);

  it('closes a session that sends nothing for sessionIdleMs, and says so to a late client', async () => {
    const core = await HatcheryMcpServer.start({
      dir: hatcheryDir(),
      runtime: new Runtime({ env: {} }),
      log: () => {},
    });
    const http = await serveHttp(core, { port: 0, sessionIdleMs: 150 });
    cleanups.push(async () => {
      await core.close();
      await http.close();
    });
    const init = await post(http.url, INITIALIZE);
    expect(init.status).toBe(200);
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    expect((await post(http.url, ping, init.sid)).status).toBe(200);
    // Idleness is the point here: any request would keep the session alive.
    await new Promise((r) => setTimeout(r, 600));
    expect((await post(http.url, ping, init.sid)).status).toBe(404);
  });
});
