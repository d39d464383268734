import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shouldWelcome } from '../../src/cli/serve.js';
import { CLI_PATH, REPO_ROOT, startCli } from '../helpers.js';
import { EXAMPLES, waitFor } from '../mcp/helpers.js';

const WELCOME = 'waiting for an MCP client on stdin';
/** util-linux `script` runs a command under a pseudo-terminal, as a person's shell would. */
const hasScript = spawnSync('script', ['--version']).status === 0 && process.platform === 'linux';

describe('the welcome text of the stdio server', () => {
  it('is meant only for stdio with stdin and stderr on a terminal', () => {
    expect(shouldWelcome(false, true, true)).toBe(true);
    expect(shouldWelcome(false, false, true)).toBe(false);
    expect(shouldWelcome(false, true, false)).toBe(false);
    expect(shouldWelcome(true, true, true)).toBe(false);
  });

  it.skipIf(!hasScript)('is printed when a person starts the server in a terminal', async () => {
    const command = [process.execPath, CLI_PATH, '--dir', EXAMPLES].map((w) => `'${w}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
    });
    const exit = new Promise((r) => child.on('close', r));
    try {
      await waitFor(() => out.includes('hatchery-mcp init'), 15_000, 'the welcome text');
      expect(out).toContain(WELCOME);
      expect(out).toMatch(/Serving \d+ hatcheries as tools from .*hatchery/);
      expect(out).toContain('Ctrl-C');
    } finally {
      // Ctrl-C on the terminal stops the server (and script with it).
      child.stdin.write('\x03');
      child.stdin.end();
      await Promise.race([exit, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('is never printed for a client, whose stdin is a pipe', async () => {
    const p = startCli(['--dir', EXAMPLES]);
    try {
      await waitFor(() => p.err().includes('serving'), 15_000, 'the server to start');
      // The note comes right after the start line when it comes at all; give it ample time.
      await new Promise((r) => setTimeout(r, 500));
      expect(p.err()).not.toContain(WELCOME);
      expect(p.out()).toBe('');
    } finally {
      p.child.stdin.end();
      await p.exit;
    }
  });
});
