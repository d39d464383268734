/**
 * Issue 8, unbounded HTTP sessions: 10,000 initialize requests kept 10,000 SDK servers alive. The
 * number of sessions is capped; a new client takes the place of the one idle the longest, and when
 * every session is busy it gets a clear HTTP 503 instead.
 */
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type HttpHandle, serveHttp } from '../../src/mcp/http.js';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { droneDef, echoDef, hatcheryDir, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function serve(
  maxSessions: number,
): Promise<{ core: HatcheryMcpServer; http: HttpHandle; model: ScriptedProvider }> {
  const dir = hatcheryDir();
  writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
  writeHatchery(dir, 'slow.json', droneDef('slow'));
  const model = new ScriptedProvider(async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    return 'slow answer';
  });
  const runtime = new Runtime({ providers: { openai: model }, env: {} });
  const core = await HatcheryMcpServer.start({ dir, runtime, log: () => {} });
  const http = await serveHttp(core, { port: 0, maxSessions });
  cleanups.push(async () => {
    await core.close();
    await http.close();
  });
  return { core, http, model };
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'cap-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanups.push(() => client.close().catch(() => undefined));
  return client;
}

/** A raw initialize POST. */
function initialize(url: string): Promise<{ status: number; body: string }> {
  const message = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (res) => {
        let body = '';
        res.on('data', (b) => {
          body += b;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

const shout = (c: Client) => c.callTool({ name: 'shout', arguments: { input: 'x' } });

describe('HTTP session cap', () => {
  it('keeps at most maxSessions: a new client replaces the one idle the longest', async () => {
    const { core, http } = await serve(3);
    const a = await connect(http.url);
    const b = await connect(http.url);
    const c = await connect(http.url);
    expect(http.sessionCount).toBe(3);
    // Each has its event stream open by now: listening alone does not make a session busy.
    for (const client of [b, c]) expect(textOf(await shout(client))).toBe('!x');
    // a is used again, so b is now the one idle the longest.
    expect(textOf(await shout(a))).toBe('!x');
    const d = await connect(http.url);
    expect(http.sessionCount).toBe(3);
    await expect(shout(b)).rejects.toThrow(/session not found/);
    for (const client of [a, c, d]) expect(textOf(await shout(client))).toBe('!x');

    // A flood of sessions never grows past the cap, on the HTTP side or in the MCP server.
    for (let i = 0; i < 30; i++) expect((await initialize(http.url)).status).toBe(200);
    expect(http.sessionCount).toBe(3);
    expect(core.sessionCount).toBeLessThanOrEqual(3);
  });

  it('answers 503 naming --max-sessions when every session has a call in flight', async () => {
    const { http, model } = await serve(2);
    const clients = [await connect(http.url), await connect(http.url)];
    const calls = clients.map((c) => c.callTool({ name: 'slow', arguments: { input: 'q' } }));
    await waitFor(() => model.callCount === 2, 5_000, 'both calls to reach the model');
    const refused = await initialize(http.url);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error.message).toMatch(
      /limit of 2 sessions \(--max-sessions\) and every one has a request in progress/,
    );
    for (const r of await Promise.all(calls)) expect(textOf(r)).toBe('slow answer');
    // Once a call ended, a new client gets in again.
    expect((await initialize(http.url)).status).toBe(200);
    expect(http.sessionCount).toBe(2);
  });
});
