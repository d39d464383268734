/**
 * Served CLIs of the Postgres tests, ended as a machine that dies ends them.
 */
import type { ChildProcess } from 'node:child_process';
import type { spawnCli } from '../mcp/helpers.js';

/** Kills a served CLI at once (SIGKILL: no shutdown, as when its machine dies) and waits for its exit. */
export async function killed(server: Awaited<ReturnType<typeof spawnCli>>): Promise<void> {
  const child = (server.transport as unknown as { _process: ChildProcess })._process;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}
