/**
 * Every way a served CLI is stopped (its client closing stdin, as desktop clients do; SIGTERM;
 * SIGINT) ends every process tree it started: a script tree that ignores SIGTERM (of a call and of a
 * background run), and a stdio MCP server used as a tool together with the helper process it started.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureJs } from '../fixtures/paths.js';
import { tempDir } from '../helpers.js';
import { hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';
import { running, treeArgv, treePids } from './procs-helpers.js';

const leftovers: number[] = [];
afterEach(() => {
  // A failed test must not leave its processes to the next ones.
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** The parent pid of a process (Linux /proc). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** A served folder: `tree` runs a script tree that ignores SIGTERM; `helper` calls a stdio MCP server's tool. */
function folder(): string {
  const dir = hatcheryDir();
  writeHatchery(dir, 'tree.json', {
    name: 'tree',
    desc: 'a tree that ignores SIGTERM',
    nodes: [{ type: 'script', cmd: [...treeArgv('{{ ctx.input }}', true)] }],
  });
  writeHatchery(dir, 'helper.json', {
    name: 'helper',
    desc: 'the pid of the MCP server helper process',
    mcpServers: { tree: { command: process.execPath, args: [fixtureJs('mcp-tree-server')] } },
    nodes: [{ name: 'Pid', type: 'tool', tool_name: 'mcp:tree/grandchild', tool_args: {} }],
  });
  return dir;
}

const STOPS = ['stdin closed', 'SIGTERM', 'SIGINT'] as const;

describe('stopping the served CLI', () => {
  for (const stop of STOPS) {
    it(`${stop}: ends a script tree that ignores SIGTERM and an MCP server with its children`, async () => {
      const server = await spawnCli(folder());
      const child = (server.transport as unknown as { _process: ChildProcess })._process;
      const cliPid = child.pid!;
      const res = await server.client.callTool({ name: 'helper', arguments: { input: 'x' } });
      const sleeper = Number(textOf(res));
      expect(running(sleeper), textOf(res)).toBe(true);
      const mcpServer = parentOf(sleeper);
      const work = tempDir();
      const call = server.client
        .callTool({ name: 'tree', arguments: { input: work } })
        .catch((e: unknown) => e);
      const { sh, grand } = await treePids(work);
      // A background run is left interrupted to be resumed, but its processes end with the server.
      const bgWork = tempDir();
      await server.client.callTool({ name: 'hatchery_start', arguments: { name: 'tree', input: bgWork } });
      const bg = await treePids(bgWork);
      leftovers.push(sleeper, mcpServer, sh, grand, bg.sh, bg.grand);
      const exited = new Promise((r) => child.once('exit', r));
      if (stop === 'stdin closed') child.stdin?.end();
      else process.kill(cliPid, stop);
      await exited;
      void call;
      // SIGTERM is ignored by the script tree: only the escalation to SIGKILL ends it.
      await waitFor(
        () => [sleeper, mcpServer, sh, grand, bg.sh, bg.grand].every((p) => !running(p)),
        10_000,
        `every process the server started to end after ${stop}`,
      );
      await server.close().catch(() => {});
    });
  }
});
