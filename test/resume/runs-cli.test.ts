/**
 * runs list / show / cancel and the guards of runs resume, through the built CLI: the JSON shapes a
 * script relies on, and the ids and states it must refuse.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, startCli, tempDir } from '../helpers.js';

const { openai } = fakeVendors();
let dir: string;
let state: string;
const env = () => ({ OPENAI_API_KEY: 'sk-runs-cli-123456', OPENAI_BASE_URL: openai.baseURL });
const cli = (args: string[]) => runCli([...args, '--state', state], { cwd: dir, env: env() });

const greet = {
  name: 'greet',
  desc: 'two drones',
  nodes: [
    { name: 'Hello', model: 'openai:gpt-test', usr_prompt: 'hello {{ ctx.input }}', next: 'Bye' },
    { name: 'Bye', model: 'openai:gpt-test', usr_prompt: 'bye {{ out.Hello }}' },
  ],
};

beforeEach(() => {
  dir = tempDir('hatchery-runs-');
  state = path.join(dir, 'state');
  openai.reset();
});

function writeFile(): string {
  const file = path.join(dir, 'greet.json');
  writeFileSync(file, JSON.stringify(greet));
  return file;
}

async function ids(): Promise<string[]> {
  return (JSON.parse((await cli(['runs', 'list', '--json'])).stdout) as { id: string }[]).map((r) => r.id);
}

describe('runs list and show', () => {
  it('lists runs newest first with their status, and shows the nodes of one run', async () => {
    const file = writeFile();
    openai.enqueue({ text: 'hi', usage: { input: 5, output: 2 } }, { status: 400, message: 'no more' });
    expect((await cli(['run', file, '--input', 'Ada', '-q'])).code).toBe(1);
    openai.enqueue('hi again', 'bye');
    expect((await cli(['run', file, '--input', 'Bob', '-q'])).code).toBe(0);

    const list = JSON.parse((await cli(['runs', 'list', '--json'])).stdout);
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({
      hatchery: 'greet',
      status: 'succeeded',
      steps: 2,
      attempts: 1,
      output: 'bye',
    });
    expect(list[1]).toMatchObject({ hatchery: 'greet', status: 'failed', node: 'Bye', steps: 1 });
    expect(list[1].usage).toMatchObject({ inputTokens: 5, outputTokens: 2 });
    const failed = JSON.parse((await cli(['runs', 'list', '--json', '--status', 'failed'])).stdout);
    expect(failed.map((r: { id: string }) => r.id)).toEqual([list[1].id]);

    const show = await cli(['runs', 'show', list[1].id, '--json']);
    expect(show.code).toBe(0);
    const run = JSON.parse(show.stdout);
    expect(run).toMatchObject({ id: list[1].id, status: 'failed', code: 'PROVIDER' });
    expect(run.nodes).toEqual([
      {
        node: 'Hello',
        path: '',
        seq: 1,
        depth: 0,
        ms: expect.any(Number),
        usage: { inputTokens: 5, outputTokens: 2 },
        attempt: 1,
      },
    ]);
    expect(run.error).toContain('no more');

    const text = await cli(['runs', 'show', list[1].id.slice(0, 6)]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`run ${list[1].id}: greet, failed`);
    expect(text.stdout).toContain('Hello (');
    expect(text.stdout).toContain('5+2 tokens');
    expect(text.stdout).toMatch(/error \[PROVIDER\]: .*no more/);
  });

  it('refuses a bad --status and an argument list does not take', async () => {
    const bad = await cli(['runs', 'list', '--status', 'weird']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--status must be one of');
    expect((await cli(['runs', 'show'])).code).toBe(2);
    expect((await cli(['runs', 'explode'])).code).toBe(2);
  });
});

describe('run ids and states runs resume refuses', () => {
  it('an unknown id, a hostile id and an ambiguous prefix are refused, naming the problem', async () => {
    const file = writeFile();
    openai.enqueue('hi', 'bye');
    await cli(['run', file, '--input', 'Ada', '-q']);
    const [id] = await ids();

    const unknown = await cli(['runs', 'show', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run');
    expect(unknown.stderr).toContain(state);

    for (const hostile of ['../../etc/passwd', '/etc/passwd', 'a b', '..']) {
      const res = await cli(['runs', 'resume', hostile]);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('is not a run id');
    }

    // A second run whose id shares the first 8 characters: a short prefix names both.
    // Its 10th character differs from the first id's, so a 10-character prefix names one run only.
    const twin = `${id!.slice(0, 8)}-${id![9] === 'f' ? '0' : 'f'}fff-4fff-8fff-ffffffffffff`;
    const text = readFileSync(path.join(state, `${id}.jsonl`), 'utf8').replaceAll(id!, twin);
    writeFileSync(path.join(state, `${twin}.jsonl`), text);
    const ambiguous = await cli(['runs', 'show', id!.slice(0, 6)]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('is ambiguous');
    expect((await cli(['runs', 'show', id!.slice(0, 10)])).code).toBe(0);
    // Below 6 characters a prefix is no id at all.
    expect((await cli(['runs', 'show', id!.slice(0, 4)])).code).toBe(1);
  });

  it('refuses to resume a run that is still running, and cancels it', async () => {
    const file = writeFile();
    openai.enqueue({ text: 'slow', delayMs: 60_000 });
    const p = startCli(['run', file, '--input', 'Ada', '--state', state, '-q'], { cwd: dir, env: env() });
    p.child.stdin.end();
    const end = Date.now() + 15_000;
    while (openai.requests.length === 0 || readdirSync(state).length === 0) {
      if (Date.now() > end) throw new Error('the run never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    const [id] = await ids();
    const refused = await cli(['runs', 'resume', id!]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('still running');

    const cancel = await cli(['runs', 'cancel', id!]);
    expect(cancel.code).toBe(0);
    // The run's own process stops it and ends its journal as cancelled.
    expect(await p.exit).not.toBe(0);
    expect(p.err()).toContain('cancelled');
    const show = JSON.parse((await cli(['runs', 'show', id!, '--json'])).stdout);
    expect(show.status).toBe('cancelled');
  });

  it('refuses an answer for a run that waits for none', async () => {
    const file = writeFile();
    openai.enqueue('hi', { status: 400, message: 'no' });
    await cli(['run', file, '--input', 'Ada', '-q']);
    const [id] = await ids();
    const res = await cli(['runs', 'resume', id!, '--answer', 'yes']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('is not waiting for an answer');
  });

  it("says so when the run's file is gone", async () => {
    const file = writeFile();
    openai.enqueue('hi', { status: 400, message: 'no' });
    await cli(['run', file, '--input', 'Ada', '-q']);
    const [id] = await ids();
    rmSync(file);
    const res = await cli(['runs', 'resume', id!]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the file of run ${id}, ${file}, is gone`);
  });

  it('refuses to resume a run whose input held a secret: the journal keeps it redacted', async () => {
    const file = writeFile();
    openai.enqueue('hi', { status: 400, message: 'no' });
    await cli(['run', file, '--input', 'sk-runs-cli-123456', '-q']);
    const [id] = await ids();
    const res = await cli(['runs', 'resume', id!]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('its input held a secret');
  });
});

describe('run --replay-run guards', () => {
  it('refuses a hostile id, an unknown one, and --record or --replay beside it', async () => {
    const file = writeFile();
    const hostile = await cli(['run', file, '--replay-run', '../../etc/passwd', '-q']);
    expect(hostile.code).toBe(2);
    expect(hostile.stderr).toContain('is not a run id');
    const unknown = await cli(['run', file, '--replay-run', '00000000-0000-4000-8000-000000000000', '-q']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run');
    const both = await cli(['run', file, '--replay-run', 'abcdef12', '--replay', 'x.jsonl', '-q']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--replay-run excludes');
    expect(openai.requests).toHaveLength(0);
  });
});
