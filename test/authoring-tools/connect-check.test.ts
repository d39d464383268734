/**
 * Issue 10: `validate --connect` starts the MCP servers a file uses (the real fixture server here),
 * checks tool names and baneling tool_args against what the servers list, and closes them all.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectCheck } from '../../src/tools/connect-check.js';
import { tempDir } from '../helpers.js';
import { alive, ECHO_SERVER, echoServer, loadIn } from '../tools/helpers.js';

async function waitUntil(ok: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (ok()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return ok();
}

describe('connectCheck', () => {
  it('reports missing tools with did-you-mean and tool_args that do not fit the inputSchema', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      inputs: { n: 'a number' },
      mcpServers: { e: echoServer() },
      nodes: [
        { name: 'A', type: 'tool', tool_name: 'mcp:e/ech', tool_args: { text: 'x' }, next: 'B' },
        { name: 'B', type: 'tool', tool_name: 'mcp:e/add', tool_args: { a: 1, b: 'two', c: 3 }, next: 'C' },
        { name: 'C', type: 'tool', tool_name: 'mcp:e/add', tool_args: { a: '{{ ctx.n }}' }, next: 'D' },
        { name: 'D', usr_prompt: 'u', tools: ['mcp:e/echo', 'mcp:e/stat'], next: 'E' },
        { name: 'E', type: 'tool', tool_name: 'mcp:e', tool_args: {} },
      ],
    });
    const tools = 'echo, add, stats, fail, pid, getenv, sleep';
    expect(await connectCheck(h)).toEqual([
      {
        path: 'nodes/0/tool_name',
        message: `MCP server "e" has no tool "ech" (did you mean "echo"?); its tools: ${tools}`,
      },
      {
        path: 'nodes/1/tool_args/b',
        message: 'argument "b" of mcp:e/add must be a number, not a string ("two")',
      },
      { path: 'nodes/1/tool_args/c', message: 'mcp:e/add has no argument "c"; its arguments: a, b' },
      { path: 'nodes/2/tool_args', message: 'mcp:e/add needs argument "b" (arguments of mcp:e/add: a, b)' },
      {
        path: 'nodes/3/tools/1',
        message: `MCP server "e" has no tool "stat" (did you mean "stats"?); its tools: ${tools}`,
      },
      {
        path: 'nodes/4/tool_name',
        message: `"mcp:e" stands for 7 tools; a baneling calls one: name it as mcp:e/<tool> (tools: ${tools})`,
      },
    ]);
  });

  it('finds nothing wrong in a file whose tools exist, with servers of --mcp-config and drone mcp entries', async () => {
    const dir = tempDir();
    const h = loadIn(
      dir,
      {
        name: 'm',
        desc: 'd',
        nodes: [
          { name: 'A', type: 'tool', tool_name: 'mcp:cfg/add', tool_args: { a: 1, b: 2 }, next: 'B' },
          { name: 'B', usr_prompt: 'u', mcp: [`${process.execPath} ${ECHO_SERVER}`] },
        ],
      },
      'main.json',
      { mcpServers: { cfg: echoServer() } },
    );
    expect(await connectCheck(h, { mcpServers: { cfg: echoServer() } })).toEqual([]);
  });

  it('reports a server that does not start or answer in time, and leaves no process behind', async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, 'pid');
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      mcpServers: {
        broken: echoServer('--fail-start'),
        mute: {
          command: '/bin/sh',
          args: ['-c', `echo $$ > ${pidFile}; exec ${process.execPath} -e "setInterval(() => {}, 1000)"`],
        },
      },
      nodes: [{ name: 'A', usr_prompt: 'u', tools: ['mcp:broken/echo', 'mcp:mute/x'] }],
    });
    const found = await connectCheck(h, { timeoutMs: 1500 });
    expect(found.map((p) => p.path)).toEqual(['nodes/0/tools/0', 'nodes/0/tools/1']);
    expect(found[0]!.message).toMatch(
      /^MCP server "broken" did not start or list its tools: .*missing configuration FOO_TOKEN/s,
    );
    expect(found[1]!.message).toMatch(/^MCP server "mute" did not start or list its tools: /);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await waitUntil(() => !alive(pid))).toBe(true);
  });
});
