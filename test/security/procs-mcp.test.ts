/**
 * Issue 8, process trees and MCP: a cancelled call of the served CLI ends its script's tree and
 * frees its --max-concurrent slot at once; shutting the server down ends the trees of runs in
 * flight; stdio MCP servers used as tools are closed with everything they started.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpPool } from '../../src/tools/mcp-client.js';
import { tempDir } from '../helpers.js';
import { echoDef, hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';
import { HOLD_S, running, treePids, treeServer } from './procs-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A served folder with `tree` (the tree script, pid files in the folder given as input) and `echo`. */
async function serve(args: string[] = []) {
  const dir = hatcheryDir();
  writeHatchery(dir, 'tree.json', {
    name: 'tree',
    desc: 'leaves a grandchild',
    nodes: [
      {
        type: 'script',
        cmd: [
          'sh',
          '-c',
          `echo $$ > "$1/pid"; sleep ${HOLD_S} & echo $! > "$1/grand"; wait`,
          'sh',
          '{{ ctx.input }}',
        ],
      },
    ],
  });
  writeHatchery(dir, 'echo.json', echoDef('echo'));
  const s = await spawnCli(dir, { args });
  cleanups.push(s.close);
  return s;
}

const dead = (...pids: number[]) => pids.every((p) => !running(p));

describe('the MCP server (built CLI over stdio)', () => {
  it('ends the tree of a cancelled call and frees its --max-concurrent slot at once (was: 30 s)', async () => {
    const { client } = await serve(['--max-concurrent', '1']);
    const work = tempDir();
    const ctrl = new AbortController();
    const first = client
      .callTool({ name: 'tree', arguments: { input: work } }, undefined, { signal: ctrl.signal })
      .catch((e: unknown) => e);
    const { sh, grand } = await treePids(work);
    ctrl.abort();
    expect(await first).toBeInstanceOf(Error);
    // The only slot is free as soon as the cancelled run's processes are gone (its sleep outlasts the test).
    expect(textOf(await client.callTool({ name: 'echo', arguments: { input: 'next' } }))).toBe('next');
    await waitFor(() => dead(sh, grand), 4000, 'the cancelled tree to die');
  });

  it('ends the trees of runs in flight when it shuts down', async () => {
    const { client, close } = await serve();
    const work = tempDir();
    const call = client.callTool({ name: 'tree', arguments: { input: work } }).catch((e: unknown) => e);
    const { sh, grand } = await treePids(work);
    await close();
    await call;
    await waitFor(() => dead(sh, grand), 5000, 'the tree to die with the server');
  });
});

describe('stdio MCP servers used as tools', () => {
  const never = new AbortController().signal;

  async function grandchildOf(pool: McpPool): Promise<{ pid: number; exit: () => Promise<unknown> }> {
    const def = treeServer();
    const grand = await pool.tool('tree', def, 'grandchild', never);
    const exit = await pool.tool('tree', def, 'exit', never);
    const pid = Number((await grand.call({}, { signal: never } as never)).text);
    expect(running(pid)).toBe(true);
    return { pid, exit: () => exit.call({}, { signal: never } as never).catch((e: unknown) => e) };
  }

  it('closing the pool ends what a server started (was: left running)', async () => {
    const pool = new McpPool();
    const { pid } = await grandchildOf(pool);
    await pool.close();
    await waitFor(() => !running(pid), 4000, "the server's child to die");
  });

  it('a server that dies takes what it started with it', async () => {
    const pool = new McpPool();
    cleanups.push(() => pool.close());
    const { pid, exit } = await grandchildOf(pool);
    await exit();
    await waitFor(() => !running(pid), 4000, "the dead server's child to die");
  });
});
