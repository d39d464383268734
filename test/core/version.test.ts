/** One package version (core/version.ts) for the MCP server, the CLI and the MCP client. */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { packagePaths, packageVersion } from '../../src/core/package.js';
import { McpPool } from '../../src/tools/mcp-client.js';
import { createEchoServer } from '../fixtures/mcp-echo-server.js';
import { hatcheryDir, inMemory } from '../mcp/helpers.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('the package version', () => {
  it('is the one of package.json, read from the source tree', () => {
    expect(packageVersion()).toBe(pkg.version);
  });

  it('comes from the package root, found from the code folder the module runs from', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
    expect(packagePaths()).toEqual({ root, code: `${root}/src` });
  });

  it('is what the MCP server announces', async () => {
    const { client, close } = await inMemory(hatcheryDir());
    try {
      expect(client.getServerVersion()?.version).toBe(pkg.version);
    } finally {
      await close();
    }
  });

  it('is what hatchery announces to the MCP servers it uses', async () => {
    const server = createEchoServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await server.connect(transport);
    const http = createServer((req, res) => void transport.handleRequest(req, res));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const pool = new McpPool();
    try {
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      await pool.tools('echo', { url }, new AbortController().signal);
      expect(server.server.getClientVersion()).toEqual({ name: 'hatchery-mcp', version: pkg.version });
    } finally {
      await pool.close();
      await server.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    }
  });
});
