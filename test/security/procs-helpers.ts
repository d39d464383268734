/**
 * Helpers of the child-process tests: a shell script that leaves a grandchild behind and records
 * both pids, and a liveness check that counts an unreaped zombie as dead.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, vi } from 'vitest';
import { fixtureJs } from '../fixtures/paths.js';
import { waitFor } from '../mcp/helpers.js';

/**
 * How long the sleeps of these trees last: twice the test timeout, so a run that waited for one to
 * end by itself fails its test instead of passing slowly.
 */
export const HOLD_S = 60;

/**
 * argv of `sh` writing its pid to `<dir>/pid`, starting a {@link HOLD_S} sleep in the background
 * (sharing its stdout) with the pid in `<dir>/grand`, then waiting: the process tree of issue 8.
 */
export function treeArgv(dir: string, trapTerm = false): string[] {
  const trap = trapTerm ? "trap '' TERM; " : '';
  return ['sh', '-c', `${trap}echo $$ > "$1/pid"; sleep ${HOLD_S} & echo $! > "$1/grand"; wait`, 'sh', dir];
}

/** Waits for the pids the tree script writes. */
export async function treePids(dir: string): Promise<{ sh: number; grand: number }> {
  const read = (f: string) => {
    const p = path.join(dir, f);
    const n = existsSync(p) ? Number(readFileSync(p, 'utf8').trim()) : 0;
    return n > 0 ? n : undefined;
  };
  return waitFor(
    () => {
      const sh = read('pid');
      const grand = read('grand');
      return sh && grand ? { sh, grand } : undefined;
    },
    10_000,
    'the tree script to write its pids',
  );
}

const PROC = existsSync('/proc/self/stat');

/** True while a process runs; a zombie (dead, waiting for its new parent to reap it) counts as dead. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!PROC) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Asserts that every pid has ended. A program's promise settles when its pipes close, which the kernel
 * does early in a process's exit; the process itself is gone a moment later, so allow that moment (1 s).
 */
export async function expectEnded(...pids: number[]): Promise<void> {
  await vi.waitFor(() => expect(pids.filter(running)).toEqual([]), { timeout: 1000 });
}

/** The tree fixture MCP server as an mcpServers entry. */
export function treeServer(env?: Record<string, string>) {
  return { command: process.execPath, args: [fixtureJs('mcp-tree-server')], ...(env ? { env } : {}) };
}
