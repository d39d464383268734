/**
 * mcp: tools against downstream servers of both protocol eras: a 2025-era server (SDK v1, what most
 * users still run) and servers built on SDK v2, over stdio (`serveStdio`) and HTTP (`createMcpHandler`).
 * Stdio servers are opened with the 2025 handshake; HTTP servers are probed for 2026-07-28 and fall
 * back to 2025 when they do not speak it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { Runtime } from '../../src/runtime/runtime.js';
import { createEchoServer } from '../fixtures/mcp-echo-server.js';
import { createV2Server, type SeenTrace } from '../fixtures/mcp-v2-server.js';
import { fixtureJs } from '../fixtures/paths.js';
import { tempDir } from '../helpers.js';
import { loadIn, Scripted } from './helpers.js';

const V2_SERVER = fixtureJs('mcp-v2-server');
const runtimes: Runtime[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Runs a file of two banelings, `mcp:<server>/era` then `mcp:<server>/add`, against one server entry. */
async function eraAndSum(entry: Record<string, unknown>): Promise<{ era: string; sum: string }> {
  const h = loadIn(tempDir(), {
    name: 'eras',
    desc: 'd',
    mcpServers: { down: entry },
    nodes: [
      { name: 'Era', type: 'tool', tool_name: 'mcp:down/era', tool_args: {}, next: 'Sum' },
      { name: 'Sum', type: 'tool', tool_name: 'mcp:down/add', tool_args: { a: 2, b: 40 } },
    ],
  });
  const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
  runtimes.push(rt);
  const res = await rt.run(h);
  return { era: String(res.outputs.Era), sum: res.output };
}

/** Serves `handle` on a loopback port; returns the /mcp URL. */
async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const http = createServer(handle);
  servers.push(http);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

/** A v2 server over HTTP through createMcpHandler (both eras, one server per request). */
function v2Http(onCall?: (seen: SeenTrace) => void): Promise<string> {
  return listen(toNodeHandler(createMcpHandler(() => createV2Server(onCall))));
}

/** A 2025-era (SDK v1) server with sessions, the way most deployed HTTP servers run. */
function v1SessionHttp(): Promise<string> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return listen(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) {
      await known.handleRequest(req, res);
      return;
    }
    const fresh: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid: string): void => {
        sessions.set(sid, fresh);
      },
    });
    await createEchoServer().connect(fresh);
    await fresh.handleRequest(req, res);
  });
}

/** Reads a request body as JSON. */
async function bodyOf(req: IncomingMessage): Promise<{ method?: string }> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text) as { method?: string };
}

/**
 * A 2025-era (SDK v1) stateless server behind a front that answers the 2026 probe (server/discover)
 * with `status`, as some deployed servers answer any request they do not know; `probes` counts them.
 */
function v1Answering(status: number, probes: { n: number }): Promise<string> {
  return listen(async (req, res) => {
    const body = req.method === 'POST' ? await bodyOf(req) : undefined;
    if (body?.method === 'server/discover') {
      probes.n++;
      res.writeHead(status, { 'content-type': 'text/plain' }).end('no');
      return;
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await createEchoServer().connect(transport);
    await transport.handleRequest(req, res, body);
  });
}

/** A file with one baneling calling mcp:down/add on `url`. */
function addOn(url: string) {
  return loadIn(tempDir(), {
    name: 'add',
    desc: 'd',
    mcpServers: { down: { url } },
    nodes: [{ name: 'Add', type: 'tool', tool_name: 'mcp:down/add', tool_args: { a: 1, b: 2 } }],
  });
}

describe('downstream servers of both eras', () => {
  it('a v2 server on stdio (serveStdio) is opened with the 2025 handshake and its tools work', async () => {
    const { era, sum } = await eraAndSum({ command: process.execPath, args: [V2_SERVER] });
    expect(era).toBe('2025-11-25');
    expect(sum).toBe('42');
  });

  it('a v2 server over HTTP (createMcpHandler) is spoken to in the 2026-07-28 era', async () => {
    const seen: SeenTrace[] = [];
    const url = await v2Http((s) => seen.push(s));
    const { era, sum } = await eraAndSum({ url });
    expect(era).toBe('2026-07-28');
    expect(sum).toBe('42');
    expect(seen.map((s) => [s.tool, s.protocolVersion])).toEqual([['add', '2026-07-28']]);
  });

  it("passes a run's trace context to a 2026-era HTTP server beside the SDK's own _meta keys", async () => {
    const seen: SeenTrace[] = [];
    const url = await v2Http((s) => seen.push(s));
    const h = loadIn(tempDir(), {
      name: 't',
      desc: 'd',
      mcpServers: { down: { url } },
      nodes: [{ type: 'tool', tool_name: 'mcp:down/echo', tool_args: { text: 'traced' } }],
    });
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    runtimes.push(rt);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect((await rt.run(h, { trace: { traceparent, tracestate: 'k=v' } })).output).toBe('traced');
    expect(seen).toEqual([{ tool: 'echo', protocolVersion: '2026-07-28', traceparent, tracestate: 'k=v' }]);
  });

  it('a 2025-era HTTP server that answers the probe with a 500 gets the 2025 handshake alone', async () => {
    const probes = { n: 0 };
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    runtimes.push(rt);
    expect((await rt.run(addOn(await v1Answering(500, probes)))).output).toBe('3');
    expect(probes.n).toBe(1);
  });

  it('a 401 to the probe is reported as such, not retried as a 2025 server', async () => {
    const probes = { n: 0 };
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    runtimes.push(rt);
    const err = (await rt.run(addOn(await v1Answering(401, probes))).catch((e) => e)) as Error;
    expect(err.message).toMatch(
      /MCP server "down": the server refused the credentials \(HTTP 401\) at http:\/\/127\.0\.0\.1:\d+\/mcp/,
    );
    expect(probes.n).toBe(1);
  });

  it('a 2025-era HTTP server with sessions still works: the probe falls back to initialize', async () => {
    const url = await v1SessionHttp();
    const h = loadIn(tempDir(), {
      name: 'v1',
      desc: 'd',
      mcpServers: { old: { url } },
      nodes: [{ type: 'tool', tool_name: 'mcp:old/add', tool_args: { a: 1, b: 2 } }],
    });
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    runtimes.push(rt);
    expect((await rt.run(h)).output).toBe('3');
  });
});
