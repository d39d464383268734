/**
 * Attack: `serve --http` on an address the network can reach, without a token. The built CLI refuses
 * to start (exit 2, a message saying what to pass) in every spelling of such an address, unless
 * --insecure-no-token says so, which warns on stderr; loopback addresses and a token start as before.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { serveHttp } from '../../src/mcp/http.js';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { type CliProcess, runCli, startCli } from '../helpers.js';
import { echoDef, hatcheryDir, waitFor, writeHatchery } from '../mcp/helpers.js';

const TOKEN = 'tok-7c2e9b41d0a85f36';

function folder(): string {
  const dir = hatcheryDir();
  writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
  return dir;
}

/** Starts `serve` and waits for its listening line; returns the process and the URL it printed. */
async function serving(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ cli: CliProcess; url: string }> {
  const cli = startCli(['--dir', folder(), '--no-journal', ...args], { env });
  const url = await waitFor(
    () => /listening on (http:\S+)/.exec(cli.err())?.[1],
    15_000,
    'the listening line',
  );
  return { cli, url };
}

async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  await cli.exit;
}

/** The same endpoint reached through the loopback interface (a wildcard bind listens there too). */
const viaLoopback = (url: string) => url.replace(/\/\/[^/]+:(\d+)\//, '//127.0.0.1:$1/');

describe('serve --http on a network address without a token', () => {
  it('refuses to start in every spelling of such an address: exit 2, what to pass, never listening', async () => {
    for (const address of [
      '0.0.0.0:0',
      '[::]:0',
      '192.168.1.7:0',
      'my-box.example:0',
      'localhost.example:0',
    ]) {
      for (const token of [[], ['--token', '']]) {
        const r = await runCli(['serve', '--dir', folder(), '--no-journal', '--http', address, ...token], {
          env: { HATCHERY_MCP_TOKEN: '' },
        });
        expect(r.code, `${address} ${token.join(' ')}`).toBe(2);
        expect(r.stderr).toContain('serves beyond this machine without a token');
        expect(r.stderr).toContain('Pass --token TOKEN (or set HATCHERY_MCP_TOKEN), bind 127.0.0.1');
        expect(r.stderr).toContain('--insecure-no-token');
        expect(r.stderr).not.toContain('listening on');
        expect(r.stdout).toBe('');
      }
    }
  }, 60_000);

  it('refuses --insecure-no-token without --http', async () => {
    const r = await runCli(['serve', '--dir', folder(), '--insecure-no-token']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--insecure-no-token only applies with --http');
  });

  it('starts on 0.0.0.0 with --token (or HATCHERY_MCP_TOKEN), and then demands it', async () => {
    for (const [args, env] of [
      [['--token', TOKEN], {}],
      [[], { HATCHERY_MCP_TOKEN: TOKEN }],
    ] as const) {
      const { cli, url } = await serving(['--http', '0.0.0.0:0', ...args], env);
      try {
        expect(cli.err()).toContain('(bearer token required)');
        expect(cli.err()).not.toContain('WARNING');
        const r = await fetch(viaLoopback(url), { method: 'POST', body: '{}' });
        expect(r.status).toBe(401);
      } finally {
        await stop(cli);
      }
    }
  }, 40_000);

  it('starts on loopback spellings without a token, and warns of nothing', async () => {
    for (const address of ['127.0.0.1:0', '[::1]:0', 'localhost:0']) {
      const { cli } = await serving(['--http', address]);
      expect(cli.err()).not.toContain('WARNING');
      await stop(cli);
    }
  }, 40_000);

  it('with --insecure-no-token starts on 0.0.0.0, warns loudly on stderr, and serves a real client', async () => {
    const { cli, url } = await serving(['--http', '0.0.0.0:0', '--insecure-no-token'], {
      HATCHERY_MCP_TOKEN: '',
    });
    const client = new Client({ name: 'open', version: '1' });
    try {
      expect(cli.err()).toMatch(
        /^WARNING: --insecure-no-token: serving MCP over HTTP on 0\.0\.0\.0 without a token\. Anyone who can reach this port can run every hatchery served here/m,
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(viaLoopback(url))));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('shout');
    } finally {
      await client.close();
      await stop(cli);
    }
  }, 30_000);
});

describe('serveHttp (the library API) on a network address without a token', () => {
  it('rejects with a USAGE error before listening, unless insecureNoToken', async () => {
    const runtime = new Runtime({ env: {} });
    const core = await HatcheryMcpServer.start({ dir: folder(), runtime, watch: false, log: () => {} });
    try {
      for (const host of ['0.0.0.0', '::', '10.0.0.2']) {
        await expect(serveHttp(core, { host, port: 0 })).rejects.toMatchObject({
          code: 'USAGE',
          message: expect.stringContaining('serves beyond this machine without a token'),
        });
      }
      const open = await serveHttp(core, { host: '0.0.0.0', port: 0, insecureNoToken: true });
      await open.close();
      const guarded = await serveHttp(core, { host: '0.0.0.0', port: 0, token: TOKEN });
      await guarded.close();
    } finally {
      await core.close();
    }
  });
});
