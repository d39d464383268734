/**
 * Credentials of url MCP servers: `${NAME}` in `headers` comes from the environment (so no token is
 * written into a file), an unset NAME and a refused token say what to fix, and the token itself never
 * appears in any output. The built CLI runs against a real Streamable HTTP server (SDK v1 transport,
 * loopback) that checks the Authorization header.
 */

import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEchoServer } from '../fixtures/mcp-echo-server.js';
import { runCli, tempDir } from '../helpers.js';

/** The token the server accepts; tests check that no output ever contains it (nor the wrong one). */
const TOKEN = 'tok-5f1e9c2a7b3d4e60';
const WRONG = 'tok-wrong-0a1b2c3d4e5f';

let http: Server;
let url: string;
/** The Authorization header of every request the server got. */
const seen: (string | undefined)[] = [];

beforeAll(async () => {
  http = createServer(async (req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const server = createEchoServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
});

const HEADERS = { Authorization: `Bearer \${REMOTE_MCP_TOKEN}` };

/** A folder with a hatchery calling mcp:remote/echo; the server entry is in the file or in --mcp-config. */
function setUp(where: 'file' | 'config'): { file: string; args: string[] } {
  const dir = tempDir('hatchery-headers-');
  const servers = { remote: { url, headers: HEADERS } };
  const file = path.join(dir, 'remote.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'remote',
      desc: 'Calls a remote MCP server that wants a token.',
      ...(where === 'file' ? { mcpServers: servers } : {}),
      nodes: [{ name: 'Call', type: 'baneling', tool_name: 'mcp:remote/echo', tool_args: { text: 'hello' } }],
    }),
  );
  const args = ['run', file, '--input', 'x'];
  if (where === 'config') {
    const config = path.join(dir, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: servers }));
    args.push('--mcp-config', config);
  }
  return { file, args };
}

/** Everything a user sees of a CLI run. */
const shown = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr;

describe('headers of url MCP servers', () => {
  it.each(['file', 'config'] as const)(
    `takes \${NAME} from the environment (server entry in the %s)`,
    async (where) => {
      const { args } = setUp(where);
      seen.length = 0;
      for (const json of [false, true]) {
        const res = await runCli(json ? [...args, '--json'] : args, { env: { REMOTE_MCP_TOKEN: TOKEN } });
        expect(res.code, res.stderr).toBe(0);
        expect(res.stdout).toContain('hello');
        expect(shown(res)).not.toContain(TOKEN);
      }
      expect(seen).toContain(`Bearer ${TOKEN}`);
      // The literal reference never reaches the server.
      expect(seen.some((h) => h?.includes('${'))).toBe(false);
    },
  );

  it('a refused token says the server refused the credentials, names what to check, never the token', async () => {
    for (const where of ['file', 'config'] as const) {
      const { args } = setUp(where);
      for (const json of [false, true]) {
        const res = await runCli(json ? [...args, '--json'] : args, { env: { REMOTE_MCP_TOKEN: WRONG } });
        expect(res.code).not.toBe(0);
        const out = shown(res);
        expect(out).toContain('MCP server "remote"');
        expect(out).toContain('the server refused the credentials (HTTP 401)');
        expect(out).toContain('"Authorization" header');
        expect(out).toContain(`\${REMOTE_MCP_TOKEN}`);
        expect(out).not.toContain('check that the server is up');
        expect(out).not.toContain(WRONG);
        expect(out).not.toContain(TOKEN);
      }
    }
  });

  it('an unset variable is an error naming the server, the header and the variable', async () => {
    const { args } = setUp('config');
    seen.length = 0;
    const res = await runCli(args);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      `MCP server "remote": its header "Authorization" uses \${REMOTE_MCP_TOKEN}, but the environment variable REMOTE_MCP_TOKEN is not set`,
    );
    // Nothing was sent: an empty credential would only have come back as a 401.
    expect(seen).toEqual([]);
  });

  it('a server that wants credentials from an entry without headers says to add them', async () => {
    const dir = tempDir('hatchery-headers-');
    const file = path.join(dir, 'bare.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'bare',
        desc: 'Calls a remote MCP server without a token.',
        mcpServers: { remote: { url } },
        nodes: [{ type: 'baneling', tool_name: 'mcp:remote/echo', tool_args: { text: 'hello' } }],
      }),
    );
    const res = await runCli(['run', file, '--input', 'x']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('MCP server "remote": the server refused the credentials (HTTP 401)');
    expect(res.stderr).toContain('the entry sends no headers');
  });
});
