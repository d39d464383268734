/**
 * The live view on a real pseudo-terminal: the built CLI under util-linux `script`, as a user's shell
 * runs it, against the fake OpenAI server (whose replies take a moment, so the frame is redrawn).
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { fakeVendors } from '../fakes/vendors.js';
import { CLI_PATH, echo, hatch, REPO_ROOT, tempDir } from '../helpers.js';
import { FINAL_TREE } from './view-shapes.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const { openai } = fakeVendors();

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const strip = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

/**
 * Runs the built CLI on a pseudo-terminal of 100 x 30 (stdout to /dev/null unless there is an `answer`:
 * the terminal shows stderr); `answer` is typed at the first prompt ("> ") that appears.
 */
function onTerminal(
  args: string[],
  env: Record<string, string> = {},
  answer?: string,
): Promise<{ screen: string; code: number | null }> {
  const cli = [process.execPath, CLI_PATH, ...args].map(quote).join(' ');
  const cmd = `stty cols 100 rows 30; ${cli}${answer === undefined ? ' > /dev/null' : ''}`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TERM: 'xterm-256color',
      OPENAI_API_KEY: 'sk-tty-test-0123456789',
      OPENAI_BASE_URL: openai.baseURL,
      HATCHERY_MODEL: 'openai:gpt-test',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (answer === undefined) child.stdin.end();
  let screen = '';
  child.stdout.on('data', (b) => {
    screen += String(b);
    if (answer !== undefined && strip(screen).includes('\n> ')) {
      child.stdin.write(answer);
      answer = undefined;
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

/** A parallel node with two echo branches, then a drone that calls a hatch: tool once. */
function treeFile(): string {
  const dir = tempDir('hatchery-tty-');
  writeFileSync(path.join(dir, 'leaf.json'), JSON.stringify(hatch([echo('Leaf', 'leaf')], { name: 'leaf' })));
  const file = path.join(dir, 'tree.json');
  writeFileSync(
    file,
    JSON.stringify(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Ask' },
        echo('A', 'a'),
        echo('B', 'b'),
        { name: 'Ask', usr_prompt: 'go', tools: ['hatch:leaf.json'] },
      ]),
    ),
  );
  return file;
}

describe.skipIf(!hasScript)('the live view on a terminal', () => {
  it('spins while the model thinks, draws the tree, and leaves the final frame and the summary', async () => {
    openai.reset();
    openai.enqueue(
      { toolCalls: [{ name: 'leaf', args: { input: 'x' } }], delayMs: 400, usage: { input: 20, output: 4 } },
      { text: 'done it', delayMs: 400, usage: { input: 30, output: 5 } },
    );
    const { screen, code } = await onTerminal(['run', treeFile(), '--input', 'go', '--no-journal']);
    expect(code, screen).toBe(0);
    const text = strip(screen);
    // Redrawn in place (log-update's erase codes), with spinner frames while Ask waits for its model.
    expect(screen).toContain('\x1b[2K');
    expect(text).toMatch(new RegExp(`${SPINNER.source} Ask {2}drone`));
    // Colours on a terminal.
    expect(screen).toContain('\x1b[32m✔');
    const final = text.slice(text.lastIndexOf('✔ test'));
    const lines = final.split(/\r?\n/).map((l) => l.replace(/(\S) {2}.*$/, '$1'));
    expect(lines.slice(0, 11)).toEqual(['✔ test', ...FINAL_TREE]);
    expect(final).toMatch(/✔ Ask {2}drone {2}[\d.]+ m?s {2}50\+9 tokens/);
    expect(final).toMatch(/\ndone: 5 steps, [\d.]+ m?s, 50\+9 tokens\r?\n/);
  });

  it('NO_COLOR drops the colours but keeps the live frame', async () => {
    openai.reset();
    openai.enqueue({ text: 'ok', delayMs: 300 });
    const dir = tempDir('hatchery-tty-');
    const file = path.join(dir, 'one.json');
    writeFileSync(file, JSON.stringify(hatch([{ name: 'One', usr_prompt: 'x' }])));
    const { screen, code } = await onTerminal(['run', file, '--no-journal'], { NO_COLOR: '1' });
    expect(code).toBe(0);
    expect(screen).toContain('\x1b[2K');
    expect(screen).not.toMatch(/\x1b\[3\dm/);
    expect(strip(screen)).toMatch(/✔ One {2}drone/);
  });

  it('a failure is drawn in red, and the summary says failed', async () => {
    openai.reset();
    openai.enqueue({ status: 400, message: 'no such model here' });
    const dir = tempDir('hatchery-tty-');
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(hatch([{ name: 'Bad', usr_prompt: 'x' }])));
    const { screen, code } = await onTerminal(['run', file, '--no-journal']);
    expect(code).toBe(1);
    expect(screen).toContain('\x1b[31m✖');
    expect(strip(screen)).toMatch(/✖ Bad {2}drone {2}.*no such model here/);
    expect(strip(screen)).toMatch(/failed: 1 step, /);
  });

  it('steps aside for a question on the terminal and draws again after the answer', async () => {
    const file = path.join(tempDir('hatchery-tty-'), 'pick.json');
    writeFileSync(file, JSON.stringify(pick));
    const { screen, code } = await onTerminal(
      ['run', file, '--input', 'the shed', '--no-journal'],
      {},
      '2\r',
    );
    expect(code, screen).toBe(0);
    const text = strip(screen);
    expect(text).toMatch(/\? Which colour for the shed\?\r?\n {2}1\) red\r?\n {2}2\) blue\r?\n> /);
    // The frame is cleared before the question (no frame line between the question and its prompt) ...
    const question = text.indexOf('? Which colour');
    expect(text.slice(question, text.indexOf('> ', question))).not.toMatch(SPINNER);
    // ... and drawn again after it, to its final frame.
    const after = text.slice(question);
    expect(after).toMatch(/✔ pick {2}2 steps[^\n]*\r?\n {2}✔ Pick {2}ask[^\n]*\r?\n {2}✔ Say {2}baneling/);
    expect(after).toContain('painted blue');
  });
});
