import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT, runCli, tempDir } from '../helpers.js';
import { writeHatchery } from '../mcp/helpers.js';
import { pick } from './fixtures.js';

/** `script` (util-linux) gives the CLI a pseudo-terminal as a user's shell would. */
const hasScript = spawnSync('script', ['--version']).status === 0;

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs the built CLI on a pseudo-terminal; each time a prompt ("> ") appears, types the next of
 * `keys`, as a person answers what they see. Resolves with everything the terminal showed and the exit code.
 */
function onTerminal(args: string[], ...keys: string[]): Promise<{ screen: string; code: number | null }> {
  const cmd = [process.execPath, CLI_PATH, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  let prompts = 0;
  child.stdout.on('data', (b) => {
    screen += String(b);
    const seen = screen.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split('\n> ').length - 1;
    // Progress lines may follow a prompt (a parallel branch ending): count prompts, not the last line.
    if (seen > prompts) {
      prompts = seen;
      const k = keys.shift();
      if (k !== undefined) child.stdin.write(k);
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      child.stdin.destroy();
      resolve({ screen, code });
    });
  });
}

describe.skipIf(!hasScript)('ask on a terminal', () => {
  it('prompts on the terminal with numbered choices; the number picks the choice', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const { screen, code } = await onTerminal(['run', file, '--input', 'the shed'], '2\r');
    expect(code).toBe(0);
    expect(screen).toContain('? Which colour for the shed?');
    expect(screen).toMatch(/1\) red\r?\n\s+2\) blue/);
    expect(screen).toContain('painted blue');
  });

  it('accepts the choice as text in any case, and asks once more after a wrong one', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const { screen, code } = await onTerminal(['run', file, '--input', 'x'], 'green\r', 'RED\r');
    expect(code).toBe(0);
    expect(screen).toContain('"green" is not one of the choices "red", "blue". Which colour for x?');
    expect(screen).toContain('painted red');
  });

  it('Ctrl-C at the prompt cancels the run (exit 130)', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const { screen, code } = await onTerminal(['run', file, '--input', 'x'], '\x03');
    expect(code).toBe(130);
    expect(screen).not.toContain('painted');
  });

  it('two parallel branches ask one after the other on the one terminal', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'two.json', {
      name: 'two',
      desc: 'two questions at once',
      nodes: [
        { name: 'Both', type: 'parallel', branches: ['A', 'B'], join: '{{ out.A }}+{{ out.B }}' },
        { name: 'A', type: 'ask', question: 'First?', choices: ['x', 'y'] },
        { name: 'B', type: 'ask', question: 'Second?', choices: ['p', 'q'] },
      ],
    });
    const { screen, code } = await onTerminal(['run', file, '--input', 'i'], '2\r', '1\r');
    expect(code).toBe(0);
    expect(screen).toMatch(/\? First\?[\s\S]*\? Second\?/);
    expect(screen).toContain('y+p');
  });

  it('end of input (Ctrl-D) at the prompt leaves the run waiting for the answer (exit 4)', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const { screen, code } = await onTerminal(['run', file, '--input', 'x'], '\x04');
    expect(code).toBe(4);
    expect(screen).toMatch(/waiting for input: node "Pick" asks: Which colour for x\?/);
  });

  it('strips terminal escape sequences a question carries from its input', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const { screen, code } = await onTerminal(['run', file, '--input', 'a\x1b]0;pwned\x07b'], '1\r');
    expect(code).toBe(0);
    // The whole sequence goes, its text too: a title-setting OSC leaves nothing on the screen.
    expect(screen).toContain('Which colour for ab?');
    expect(screen).not.toContain('\x1b]0;');
  });
});

describe('ask without a terminal', () => {
  it('suspends: exit 4, the question, its choices and the command that answers it', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const r = await runCli(['run', file, '--input', 'the shed']);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /waiting for input: node "Pick" asks: Which colour for the shed\?\n {2}choices: red, blue\nanswer it with: hatchery-mcp runs resume [0-9a-f-]{36} --answer TEXT\n$/,
    );
  });

  it('--json prints the status, the run id and the question on stdout', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'pick.json', pick);
    const r = await runCli(['run', file, '--input', 'x', '--json', '-q']);
    expect(r.code).toBe(4);
    const out = JSON.parse(r.stdout) as { status: string; runId: string; question: unknown };
    expect(out.status).toBe('input_required');
    expect(out.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.question).toEqual({
      kind: 'ask',
      node: 'Pick',
      question: 'Which colour for x?',
      choices: ['red', 'blue'],
    });
  });

  it('the help documents exit code 4', async () => {
    const r = await runCli(['run', '--help']);
    expect(r.stdout).toContain('4 waiting for input');
  });
});
