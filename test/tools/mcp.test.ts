import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { Runtime, type RuntimeOptions } from '../../src/runtime/runtime.js';
import { McpPool } from '../../src/tools/mcp-client.js';
import { parseServerEntry, splitCommandLine } from '../../src/tools/mcp-entry.js';
import { createEchoServer } from '../fixtures/mcp-echo-server.js';
import { tempDir } from '../helpers.js';
import { alive, callTool, ECHO_SERVER, echoServer, loadIn, Scripted, toolResults } from './helpers.js';

const runtimes: Runtime[] = [];
const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all([...runtimes.splice(0).map((r) => r.tools), ...pools.splice(0)].map((p) => p.close()));
});

function runtime(model: Scripted, extra: Partial<RuntimeOptions> = {}): Runtime {
  const rt = new Runtime({ providers: { openai: model }, env: {}, ...extra });
  runtimes.push(rt);
  return rt;
}

const never = new AbortController().signal;

describe('mcp: tools over stdio', () => {
  it('offers every tool of a server to a drone and feeds results back, structured ones as JSON', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: { echo: echoServer() },
      nodes: [{ name: 'Agent', usr_prompt: '{{ ctx.input }}', tools: ['mcp:echo'] }],
    });
    const model = new Scripted([
      {
        toolCalls: [
          { name: 'echo', args: { text: 'hello' } },
          { name: 'add', args: { a: 2, b: 3 } },
        ],
      },
      callTool('stats', { text: 'abcd' }),
      (req) =>
        `done: ${req.messages
          .filter((m) => m.role === 'tool')
          .map((m) => m.content)
          .join(' | ')}`,
    ]);
    const res = await runtime(model).run(h, { input: 'go' });
    expect(res.output).toBe('done: hello | 5 | {"length":4}');
    expect(model.calls[0]!.tools!.map((t) => t.name).sort()).toEqual(
      ['add', 'echo', 'fail', 'getenv', 'pid', 'sleep', 'stats'].sort(),
    );
    const echo = model.calls[0]!.tools!.find((t) => t.name === 'echo')!;
    expect(echo.description).toBe('Returns its text');
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
  });

  it('runs a baneling on one MCP tool with templated arguments, structured-only results as JSON text', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: { echo: echoServer() },
      nodes: [
        {
          name: 'Say',
          type: 'tool',
          tool_name: 'mcp:echo/echo',
          tool_args: { text: '<{{ ctx.input | upper }}>' },
          next: 'Count',
        },
        { name: 'Count', type: 'tool', tool_name: 'mcp:echo/stats', tool_args: { text: '{{ out.Say }}' } },
      ],
    });
    const res = await runtime(new Scripted([])).run(h, { input: 'hi' });
    expect(res.outputs.Say).toBe('<HI>');
    expect(res.output).toBe('{"length":4}');
  });

  it('takes servers from --mcp-config (load option and runtime option)', async () => {
    const dir = tempDir();
    const mcpServers = { shared: echoServer() };
    const h = loadIn(
      dir,
      {
        name: 'm',
        desc: 'd',
        nodes: [{ type: 'tool', tool_name: 'mcp:shared/add', tool_args: { a: 1, b: 2 } }],
      },
      'main.json',
      { mcpServers },
    );
    const res = await runtime(new Scripted([]), { tools: { mcpServers } }).run(h);
    expect(res.output).toBe('3');
  });

  it("accepts the original's per-node mcp list of command lines (quoted, no shell)", async () => {
    const dir = tempDir();
    const line = `'${process.execPath}' "${ECHO_SERVER}" --prefix 'p_'`;
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      nodes: [{ name: 'Agent', usr_prompt: 'x', mcp: [line] }],
    });
    const model = new Scripted([
      callTool('p_echo', { text: 'via list' }),
      (req): string => String(req.messages.at(-1)?.content),
    ]);
    const res = await runtime(model).run(h);
    expect(res.output).toBe('via list');
    expect(model.calls[0]!.tools!.map((t) => t.name)).toContain('p_add');
  });

  it('shows failing and timed-out tools to the model as error results and goes on', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: { echo: echoServer() },
      nodes: [{ usr_prompt: 'x', tools: ['mcp:echo/fail', 'mcp:echo/echo', 'mcp:echo/sleep'] }],
    });
    const model = new Scripted([
      {
        toolCalls: [
          { name: 'fail', args: {} },
          { name: 'sleep', args: { ms: 10_000 } },
        ],
      },
      callTool('echo', { text: 'after' }),
      'finished',
    ]);
    const res = await runtime(model, { tools: { toolTimeoutMs: 300 } }).run(h);
    expect(res.output).toBe('finished');
    const [failed, slow] = toolResults(model, 1);
    expect(failed).toMatchObject({ isError: true, content: expect.stringContaining('boom') });
    expect(slow).toMatchObject({ isError: true, content: expect.stringContaining('timed out after 300 ms') });
    expect(toolResults(model, 2)[2]).toMatchObject({ isError: false, content: 'after' });
  });

  it('reconnects after the server crashes: the crashed call is an error, the next one works', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: { flaky: echoServer('--crash-after', '1') },
      nodes: [{ usr_prompt: 'x', tools: ['mcp:flaky/pid'] }],
    });
    const model = new Scripted([callTool('pid'), callTool('pid'), callTool('pid'), 'ok']);
    const rt = runtime(model);
    await rt.run(h);
    const [first, crashed, again] = toolResults(model, 3);
    expect(first!.isError).toBe(false);
    expect(crashed).toMatchObject({ isError: true, content: expect.stringContaining('lost its connection') });
    expect(again!.isError).toBe(false);
    expect(again!.content).not.toBe(first!.content);
    expect(alive(Number(first!.content))).toBe(false);
    const pid = Number(again!.content);
    expect(alive(pid)).toBe(true);
    await rt.close();
    expect(alive(pid)).toBe(false);
  });

  it('reports a server that fails to start with its name, command and stderr', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: { broken: echoServer('--fail-start') },
      nodes: [{ type: 'tool', tool_name: 'mcp:broken/echo', tool_args: { text: 'x' } }],
    });
    const err = (await runtime(new Scripted([]))
      .run(h)
      .catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('TOOL');
    expect(err.message).toContain('MCP server "broken"');
    expect(err.message).toContain('mcp-echo-server.mjs --fail-start');
    expect(err.message).toContain('missing configuration FOO_TOKEN');
  });

  it('names a missing program and a missing tool of a server', async () => {
    const pool = new McpPool();
    pools.push(pool);
    await expect(pool.tools('nope', { command: 'no-such-program-xyz' }, never)).rejects.toThrow(
      /MCP server "nope".*program not found: "no-such-program-xyz"/,
    );
    await expect(pool.tool('echo', echoServer(), 'nothing', never)).rejects.toThrow(
      /has no tool "nothing"; its tools: echo, add/,
    );
  });

  it('refuses two servers offering the same tool name to one drone', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: { a: echoServer(), b: echoServer('--prefix', '') },
      nodes: [{ name: 'Agent', usr_prompt: 'x', tools: ['mcp:a', 'mcp:b'] }],
    });
    const err = (await runtime(new Scripted(['x']))
      .run(h)
      .catch((e) => e)) as HatcheryError;
    expect(err.message).toMatch(/two tools named "\w+" \(mcp:a\/\w+ and mcp:b\/\w+\)/);
    expect(err.context.node).toBe('Agent');
  });

  it('shares one connection attempt between concurrent first calls and stops servers on close', async () => {
    const pool = new McpPool();
    const def = echoServer();
    const lists = await Promise.all([1, 2, 3].map(() => pool.tools('echo', def, never)));
    expect(pool.openConnections).toBe(1);
    const pidTool = lists[0]!.find((t) => t.name === 'pid')!;
    const results = await Promise.all(
      lists.map((l) => l.find((t) => t.name === 'pid')!.call({}, { signal: never } as never)),
    );
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    const pid = Number((await pidTool.call({}, { signal: never } as never)).text);
    await pool.close();
    expect(alive(pid)).toBe(false);
    expect(pool.openConnections).toBe(0);
  });

  it('passes the allow-listed environment and the entry env to servers, nothing else', async () => {
    const pool = new McpPool();
    pools.push(pool);
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-secret';
    process.env.HATCHERY_TEST_INHERITED = 'inherited';
    try {
      const def = {
        ...echoServer(),
        env: { ECHO_FIXTURE_ENV: 'set-by-def', PASSED: `\${HATCHERY_TEST_INHERITED}` },
      };
      const getenv = await pool.tool('env', def, 'getenv', never);
      const get = async (name: string) => (await getenv.call({ name }, { signal: never } as never)).text;
      expect(await get('ECHO_FIXTURE_ENV')).toBe('set-by-def');
      expect(await get('PATH')).toBe(process.env.PATH);
      // Only variables the entry names reach the server (issue 8: no inherited secrets).
      expect(await get('HATCHERY_TEST_INHERITED')).toBe('(unset)');
      expect(await get('PASSED')).toBe('inherited');
      expect(await get('OPENAI_API_KEY')).toBe('(unset)');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
      delete process.env.HATCHERY_TEST_INHERITED;
    }
  });
});

describe('mcp: tools over Streamable HTTP', () => {
  it('calls a tool of a url server with the configured headers', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const http = createServer(async (req, res) => {
      seen.push(req.headers);
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
    try {
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      const dir = tempDir();
      const h = loadIn(dir, {
        name: 'm',
        desc: 'd',
        mcpServers: { web: { url, headers: { 'x-token': 'secret' } } },
        nodes: [{ type: 'tool', tool_name: 'mcp:web/echo', tool_args: { text: 'over http' } }],
      });
      const res = await runtime(new Scripted([])).run(h);
      expect(res.output).toBe('over http');
      expect(seen.some((h) => h['x-token'] === 'secret')).toBe(true);
    } finally {
      await runtimes.pop()?.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    }
  });
});

describe('command lines of the mcp list', () => {
  it('splits like a shell without running one', () => {
    expect(splitCommandLine(`npx -y "@scope/pkg name" 'it''s' a\\ b "q\\"x"`)).toEqual([
      'npx',
      '-y',
      '@scope/pkg name',
      'its',
      'a b',
      'q"x',
    ]);
    expect(splitCommandLine('server --dir /tmp; rm -rf /')).toEqual({
      error: expect.stringContaining('";"'),
    });
    expect(splitCommandLine('a | b')).toEqual({ error: expect.stringContaining('without a shell') });
    expect(splitCommandLine('echo "$(id)"')).toEqual(['echo', '$(id)']);
    expect(splitCommandLine('echo "open')).toEqual({ error: 'unterminated " quote' });
  });

  it('turns entries into server definitions', () => {
    expect(parseServerEntry('https://example.com/mcp', '/d')).toEqual({ url: 'https://example.com/mcp' });
    expect(parseServerEntry('TOKEN=1 uvx server --x', '/d')).toEqual({
      command: 'uvx',
      args: ['server', '--x'],
      env: { TOKEN: '1' },
      cwd: '/d',
    });
    expect(parseServerEntry('  ', '/d')).toEqual({ error: expect.stringContaining('empty command line') });
    expect(path.isAbsolute(ECHO_SERVER)).toBe(true);
  });
});
