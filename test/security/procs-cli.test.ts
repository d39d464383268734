/**
 * Issue 8, process trees from the command line: Ctrl-C on `hatchery-mcp run` ends the run and every
 * process tree at once and exits 130 (it used to wait 30 s for a grandchild holding the pipe).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { CLI, waitFor, writeHatchery } from '../mcp/helpers.js';
import { expectEnded, running, treeArgv, treePids } from './procs-helpers.js';

/** Starts `hatchery-mcp run` on a one-script hatchery running the tree script. */
function runTree(trapTerm = false) {
  const dir = tempDir();
  const file = writeHatchery(dir, 'tree.json', {
    name: 'tree',
    desc: 'leaves a grandchild',
    nodes: [{ type: 'script', cmd: treeArgv(dir, trapTerm) }],
  });
  const child = spawn(process.execPath, [CLI, 'run', file, '--input', 'x', '-q'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  let stderr = '';
  child.stderr.on('data', (b) => {
    stderr += String(b);
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { dir, child, exited, stderr: () => stderr };
}

// Each test owns its CLI process and tree and mostly waits for signals and the kill grace: concurrent.
describe.concurrent('Ctrl-C on hatchery-mcp run', () => {
  it('exits 130 promptly and leaves no process behind (was: 30 s, sleep still running)', async () => {
    const { dir, child, exited, stderr } = runTree();
    const { sh, grand } = await treePids(dir);
    child.kill('SIGINT');
    // The tree's sleep outlasts the test: a CLI waiting for it would not exit in time.
    expect(await exited).toBe(130);
    expect(stderr()).toMatch(/cancelled/);
    await expectEnded(sh, grand);
  });

  it('a second Ctrl-C kills a tree that ignores SIGTERM at once', async () => {
    const { dir, child, exited } = runTree(true);
    const { sh, grand } = await treePids(dir);
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // SIGKILL reached the group before the CLI exited; the kernel may take a moment to finish them.
    await waitFor(() => !running(sh) && !running(grand), 2000, 'the tree to die');
    await expectEnded(sh, grand);
  });

  it('the first Ctrl-C alone ends a tree that ignores SIGTERM, with SIGKILL after the grace', async () => {
    const { dir, child, exited } = runTree(true);
    const { sh, grand } = await treePids(dir);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    await expectEnded(sh, grand);
  });
});
