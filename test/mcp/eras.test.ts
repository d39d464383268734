/**
 * Both protocol eras on one server: a 2026-07-28 client (SDK v2, era pinned) and a 2025-11-25 client
 * (SDK v1) against the built CLI over stdio and over HTTP, each listing and calling tools, reading
 * resources, and hearing about a file added while connected.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { StreamableHTTPClientTransport, Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_STATE } from '../helpers.js';
import { CLI, echoDef, hatcheryDir, waitFor, writeHatchery } from './helpers.js';

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

function textOf(result: unknown): string {
  const blocks = ((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[];
  return blocks.map((b) => b.text ?? '').join('');
}

/** Starts the built CLI serving `dir` over HTTP; resolves with the URL it prints and the process. */
async function serveHttp(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--dir', dir, '--http', '127.0.0.1:0'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HATCHERY_STATE: TEST_STATE },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const url = await waitFor(() => /listening on (\S+)/.exec(err)?.[1], 15_000, 'the server URL');
  return { url, child };
}

describe('a 2026-07-28 client over stdio', () => {
  let dir: string;
  let client: V2Client;

  beforeAll(async () => {
    dir = hatcheryDir();
    writeHatchery(dir, 'greet.json', echoDef('greet', 'hello '));
    client = new V2Client({ name: 'modern-test', version: '1.0.0' }, MODERN);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', '--dir', dir],
        env: { HATCHERY_STATE: TEST_STATE },
        stderr: 'ignore',
      }),
    );
  }, 30_000);

  afterAll(async () => {
    await client?.close();
  });

  it('negotiates the 2026 era and serves tools, calls and resources', async () => {
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('greet');
    const r = await client.callTool({ name: 'greet', arguments: { input: 'modern world' } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain('hello modern world');
    const { resources } = await client.listResources();
    const def = resources.find((x) => x.name === 'greet');
    expect(def).toBeDefined();
    const read = await client.readResource({ uri: def!.uri });
    expect(JSON.stringify(read.contents)).toContain('greet');
  });

  it('answers a bad call as a tool error, and goes on serving', async () => {
    const r = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('no_such_tool');
    expect((await client.callTool({ name: 'greet', arguments: { input: 'again' } })).isError).toBeFalsy();
  });

  it('delivers list changes on subscriptions/listen', async () => {
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', async () => {
      changed++;
    });
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter.toolsListChanged).toBe(true);
    writeHatchery(dir, 'added.json', echoDef('added'));
    await waitFor(() => changed > 0, 10_000, 'a tools/list_changed notification');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('added');
    await sub.close();
  });
});

describe('one HTTP endpoint, both eras', () => {
  let dir: string;
  let url: string;
  let child: ChildProcess;

  beforeAll(async () => {
    dir = hatcheryDir();
    writeHatchery(dir, 'greet.json', echoDef('greet', 'hi '));
    ({ url, child } = await serveHttp(dir));
  }, 30_000);

  afterAll(() => {
    child?.kill();
  });

  it('serves a 2026 client statelessly: no session id, every request stands alone', async () => {
    const seen: string[] = [];
    const client = new V2Client({ name: 'modern-http', version: '1.0.0' }, MODERN);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        const sid = res.headers.get('mcp-session-id');
        if (sid) seen.push(sid);
        return res;
      },
    });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe('modern');
    const r = await client.callTool({ name: 'greet', arguments: { input: 'stateless' } });
    expect(textOf(r)).toContain('hi stateless');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('greet');
    expect(seen).toEqual([]);
    await client.close();
  });

  it('sends a 2026 client progress for every node on the response stream of its call', async () => {
    const client = new V2Client({ name: 'modern-progress', version: '1.0.0' }, MODERN);
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const messages: string[] = [];
    const r = await client.callTool(
      { name: 'greet', arguments: { input: 'progress' } },
      {
        onprogress: (p) => messages.push(p.message ?? ''),
      },
    );
    expect(textOf(r)).toContain('hi progress');
    expect(messages).toEqual(
      expect.arrayContaining(['greet started', expect.stringMatching(/^step 1: Echo done/)]),
    );
    await client.close();
  });

  it('delivers list changes to a stateless 2026 client on its subscriptions/listen stream', async () => {
    const client = new V2Client({ name: 'modern-listen', version: '1.0.0' }, MODERN);
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', async () => {
      changed++;
    });
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter.toolsListChanged).toBe(true);
    writeHatchery(dir, 'heard.json', echoDef('heard'));
    await waitFor(() => changed > 0, 10_000, 'a tools/list_changed notification over HTTP');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('heard');
    await sub.close();
    await client.close();
  });

  it('keeps a session for a 2025 client on the same endpoint', async () => {
    const client = new V1Client({ name: 'legacy-http', version: '1.0.0' });
    const transport = new V1HttpTransport(new URL(url));
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const r = await client.callTool({ name: 'greet', arguments: { input: 'sessions' } });
    expect(textOf(r)).toContain('hi sessions');
    await client.close();
  });

  it('lists tools in the same order every time, whatever order the files were written in', async () => {
    writeHatchery(dir, 'zeta.json', echoDef('zeta'));
    writeHatchery(dir, 'alpha.json', echoDef('alpha'));
    const client = new V2Client({ name: 'order', version: '1.0.0' }, MODERN);
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const names = await waitFor(
      async () => {
        const n = (await client.listTools()).tools.map((t) => t.name);
        return n.includes('zeta') && n.includes('alpha') ? n : undefined;
      },
      10_000,
      'the new tools',
    );
    const again = (await client.listTools()).tools.map((t) => t.name);
    expect(again).toEqual(names);
    const hatcheries = names.filter((n) => !n.startsWith('hatchery_'));
    expect(hatcheries).toEqual([...hatcheries].sort());
    await client.close();
  });
});
