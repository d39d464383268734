/**
 * The YAML design's input and output nodes as a new user meets them, through the built CLI against
 * the fake OpenAI server: an event.file hands on the text it wrote; a constant event.file path no run
 * may write is a load-time error; trigger.stdin's prompt is shown on a terminal, and with no input and
 * no terminal the run stops before any model call, saying which input is missing and how to give it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { CLI_PATH, runCli, tempDir } from '../helpers.js';

const { openai } = fakeVendors();
const hasScript = spawnSync('script', ['--version']).status === 0;

let dir: string;
let work: string;
beforeEach(() => {
  dir = tempDir('hatchery-design-io-');
  work = path.join(dir, 'work');
  mkdirSync(path.join(dir, 'flows'), { recursive: true });
  mkdirSync(work);
  openai.reset();
});

const env = () => ({ OPENAI_API_KEY: 'sk-design-io-0123456789', OPENAI_BASE_URL: openai.baseURL });

/** The design's question-answer flow: stdin, an agent, a file, stdout. */
function flow(savePath: string): string {
  const file = path.join(dir, 'flows', 'qa.yaml');
  writeFileSync(
    file,
    `nodes:
  - id: ask
    type: trigger.stdin
    prompt: "Your question: "
    next: answer
  - id: answer
    type: agent.completion
    provider: openai
    model: gpt-test
    user_message: "Answer briefly: {{ ask }}"
    next: save
  - id: save
    type: event.file
    path: ${savePath}
    next: show
  - id: show
    type: event.stdout
    prefix: "Answer: "
`,
  );
  return file;
}

describe('event.file', () => {
  it('hands the answer on to the stdout node, not its tool status', async () => {
    const file = flow(path.join(work, 'answer.txt'));
    openai.enqueue({ text: 'Owls hunt at night.' });
    const r = await runCli(['run', file, '--input', 'owls?', '--no-journal', '-q'], {
      env: env(),
      cwd: work,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Answer: Owls hunt at night.\n');
    expect(readFileSync(path.join(work, 'answer.txt'), 'utf8')).toBe('Owls hunt at night.');
  });

  it('with a constant path no run may write, fails when the file loads, before any model call', async () => {
    for (const bad of ['answer.txt', '/etc/hatchery-answer.txt']) {
      const file = flow(bad);
      const r = await runCli(['run', file, '--input', 'owls?', '--no-journal'], { env: env(), cwd: work });
      expect(r.code, bad).toBe(3);
      expect(r.stderr, bad).toMatch(/nodes\/2\/path .*cannot write/);
      expect(openai.requests, bad).toHaveLength(0);
    }
  });
});

describe('trigger.stdin', () => {
  it('with no input and no terminal, stops before any model call naming the input and how to give it', async () => {
    const file = flow(path.join(work, 'answer.txt'));
    for (const stdin of ['', '\n']) {
      const r = await runCli(['run', file, '--no-journal'], { env: env(), cwd: work, stdin });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('needs its input');
      expect(r.stderr).toContain('Your question');
      expect(r.stderr).toContain('--input');
      expect(r.stderr).not.toContain('template');
    }
    expect(openai.requests).toHaveLength(0);
  });

  it.skipIf(!hasScript)('shows its prompt on a terminal and sends the answer typed there', async () => {
    const file = flow(path.join(work, 'answer.txt'));
    openai.enqueue({ text: 'Owls hunt at night.' });
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const cli = [process.execPath, CLI_PATH, 'run', file, '--no-journal', '-q'].map(quote).join(' ');
    const child = spawn('script', ['-qfec', cli, '/dev/null'], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'dumb', ...env() },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let typed = false;
    child.stdout.on('data', (b) => {
      screen += String(b);
      if (!typed && screen.includes('Your question: ')) {
        typed = true;
        child.stdin.write('do owls sleep?\r');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.destroy();
    expect(code, screen).toBe(0);
    expect(screen).toContain('Answer: Owls hunt at night.');
    expect(JSON.stringify(openai.requests[0]?.body)).toContain('Answer briefly: do owls sleep?');
  });

  it("describes the MCP tool's input with its prompt", async () => {
    flow(path.join(work, 'answer.txt'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_PATH, '--dir', path.join(dir, 'flows'), '--no-journal'],
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env() },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'design-io', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'qa');
      if (!tool) throw new Error('no tool "qa"');
      const input = (tool.inputSchema.properties as Record<string, { description?: string }>).input;
      expect(input?.description).toContain('Your question');
      expect(tool.inputSchema.required).toEqual(['input']);
    } finally {
      await client.close();
    }
  });
});
