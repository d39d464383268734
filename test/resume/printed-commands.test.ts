/**
 * Every `hatchery-mcp runs ...` command the CLI prints works when pasted as printed: the built CLI's
 * hints are taken from its output and run through a shell, with `hatchery-mcp` on PATH as an install
 * puts it, in the same folder and environment. A run with --no-journal prints no resume command.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { CLI_PATH, runCli, startCli, tempDir } from '../helpers.js';

/** Asks, then echoes the answer: no model involved. */
const asker = {
  name: 'asker',
  desc: 'asks for a colour',
  nodes: [
    { name: 'Pick', type: 'ask', question: 'Which colour?', next: 'Say' },
    { name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: 'picked {{ out.Pick }}' } },
  ],
};

let dir: string;
let file: string;
/** A state folder a shell needs quoting for, and the environment's own (HATCHERY_STATE), another one. */
let state: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = tempDir('hatchery-hints-');
  file = path.join(dir, 'asker.json');
  writeFileSync(file, JSON.stringify(asker));
  state = path.join(dir, "my state's runs");
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(CLI_PATH, path.join(bin, 'hatchery-mcp'));
  env = {
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
    HATCHERY_STATE: path.join(dir, 'env-state'),
  };
});

/** The command after `marker` on the line of `text` that holds it (up to `end`, when given). */
function printed(text: string, marker: string, end?: string): string {
  const line = text.split('\n').find((l) => l.includes(marker));
  expect(line, text).toBeDefined();
  const cmd = line!.slice(line!.indexOf(marker) + marker.length);
  return end === undefined ? cmd : cmd.slice(0, cmd.indexOf(end));
}

/** Runs `line` as a user pasting it would: through sh, in the same folder and environment. */
function paste(line: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('sh', ['-c', line], { cwd: dir, env: { HOME: process.env.HOME ?? '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the answer command of a waiting run', () => {
  it('carries --state, quoted, when the run used one, and answers the run as printed', async () => {
    const run = await runCli(['run', file, '--state', state, '-q'], { cwd: dir, env });
    expect(run.code).toBe(4);
    const cmd = printed(run.stderr, 'answer it with: ');
    expect(cmd).toContain('--state');
    expect(cmd).toMatch(/ --answer TEXT$/);
    const answered = await paste(cmd);
    expect(answered).toMatchObject({ code: 0, stdout: 'picked TEXT\n' });
  });

  it('leaves --state out when the run used the default folder, and still works', async () => {
    const run = await runCli(['run', file, '-q'], { cwd: dir, env });
    expect(run.code).toBe(4);
    const cmd = printed(run.stderr, 'answer it with: ');
    expect(cmd).toMatch(/^hatchery-mcp runs resume [0-9a-f-]{36} --answer TEXT$/);
    expect(await paste(cmd)).toMatchObject({ code: 0, stdout: 'picked TEXT\n' });
  });

  it('is what runs show prints too, and a resume that waits again prints one that works', async () => {
    const twice = {
      ...asker,
      nodes: [
        { name: 'Pick', type: 'ask', question: 'Which colour?', next: 'Shade' },
        { name: 'Shade', type: 'ask', question: 'Which shade?', next: 'Say' },
        { ...asker.nodes[1], tool_args: { text: '{{ out.Shade }} {{ out.Pick }}' } },
      ],
    };
    writeFileSync(file, JSON.stringify(twice));
    const run = await runCli(['run', file, '--state', state, '-q'], { cwd: dir, env });
    const id = /resume ([0-9a-f-]{36})/.exec(run.stderr)![1]!;
    const show = await paste(
      printed(run.stderr, 'answer it with: ')
        .replace(/ --answer TEXT$/, '')
        .replace('resume', 'show'),
    );
    expect(show.code).toBe(0);
    // Answering the first question as runs show says stops at the second, with its own command.
    const first = await paste(printed(show.stdout, 'answer with: '));
    expect(first.code).toBe(4);
    expect(first.stderr).toContain('asks: Which shade?');
    const second = await paste(printed(first.stderr, 'answer it with: '));
    expect(second).toMatchObject({ code: 0, stdout: 'TEXT TEXT\n' });
    expect(readdirSync(state)).toContain(`${id}.jsonl`);
  });

  it('is not printed for a run with --no-journal, which says how to run it so it can be answered', async () => {
    const run = await runCli(['run', file, '--no-journal', '-q'], { cwd: dir, env });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('waiting for input: node "Pick" asks: Which colour?');
    expect(run.stderr).not.toMatch(/runs resume [0-9a-f-]{36}/);
    expect(run.stderr).toContain(
      'this run keeps no journal (--no-journal), so the answer cannot be given later: run it again without --no-journal',
    );
    expect(run.stderr).toContain('on a terminal');
  });
});

describe('the commands of errors', () => {
  it('the runs list of an unknown run id lists the state folder it looked in', async () => {
    const run = await runCli(['run', file, '--state', state, '-q'], { cwd: dir, env });
    const id = /resume ([0-9a-f-]{36})/.exec(run.stderr)![1]!;
    const missing = await runCli(
      ['runs', 'resume', '00000000-0000-4000-8000-000000000000', '--state', state],
      {
        cwd: dir,
        env,
      },
    );
    expect(missing.code).toBe(1);
    const list = await paste(
      printed(
        missing.stderr,
        `error: no run "00000000-0000-4000-8000-000000000000" in ${state}; list the runs there with: `,
        ' (another',
      ),
    );
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
  });

  it('the runs cancel of a run still going cancels it', async () => {
    const slow = {
      name: 'slow',
      desc: 'waits',
      nodes: [{ name: 'Wait', type: 'script', cmd: ['sleep', '60'] }],
    };
    writeFileSync(file, JSON.stringify(slow));
    const live = startCli(['run', file, '--input', 'go', '--state', state, '-q'], { cwd: dir, env });
    let id: string | undefined;
    for (let i = 0; i < 200 && !id; i++) {
      await new Promise((r) => setTimeout(r, 50));
      id = (existsSync(state) ? readdirSync(state) : []).find((n) => n.endsWith('.jsonl'))?.slice(0, -6);
    }
    expect(id).toBeDefined();
    const refused = await runCli(['runs', 'resume', id!, '--state', state], { cwd: dir, env });
    expect(refused.code).toBe(1);
    const cancel = await paste(printed(refused.stderr, 'cancel it first with: '));
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(await live.exit).toBe(130);
  });
});
