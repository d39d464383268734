/**
 * The tasks extension end to end: the built CLI serving HTTP, a fake OpenAI server that takes its
 * time, and the spec client of tasks-client.ts. A slow call becomes a task polled to its result,
 * tasks/cancel aborts the model request (from another server process on the same state folder),
 * an ask node is answered with tasks/update, and a task survives a SIGKILL of its server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { tempDir } from '../helpers.js';
import { CLI, droneDef, hatcheryDir, textOf, waitFor, writeHatchery } from './helpers.js';
import { TasksClient } from './tasks-client.js';

let fake: FakeOpenAI;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  fake = new FakeOpenAI();
  await fake.start();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  fake.reset();
});

/** The built CLI serving `dir` over HTTP with its journal in `state`; resolves once it listens. */
async function serve(dir: string, state: string, args: string[] = []) {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--dir', dir, '--http', '127.0.0.1:0', '--state', state, ...args],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: `${fake.url}/v1`,
        HATCHERY_MODEL: 'openai:gpt-test',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const url = await waitFor(() => /listening on (\S+)/.exec(err)?.[1], 20_000, 'the server URL');
  return { url, child, client: new TasksClient({ url }), stderr: () => err };
}

function stateDir(): string {
  return path.join(tempDir('hatchery-tasks-cli-'), 'runs');
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((r) => child.once('exit', r));
}

describe('tasks extension through the built CLI', () => {
  it('a slow call becomes a task that is polled to its result', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', droneDef('slow'));
    // The model answers only when released: the call cannot end within the task wait.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.enqueue(async () => {
      await gate;
      return { text: 'slow answer' };
    });
    const { client } = await serve(dir, stateDir(), ['--task-wait', '0.2']);
    const created = await client.callTool('slow', { input: 'go' });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const id = created.taskId as string;
    expect((await client.getTask(id)).statusMessage).toMatch(/running node "Ask"/);
    release();
    const done = await client.poll(id);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('slow answer');
    expect(done.result?._meta).toHaveProperty(['hatchery/usage']);
  });

  it('tasks/cancel from another server process on the same state folder aborts the model request', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', droneDef('slow'));
    fake.enqueue({ text: 'never', delayMs: 60_000 });
    const state = stateDir();
    const owner = await serve(dir, state, ['--task-wait', '0']);
    const id = (await owner.client.callTool('slow', { input: 'go' })).taskId as string;
    await waitFor(() => fake.requests.length === 1, 10_000, 'the model request');
    const other = await serve(dir, state);
    expect((await other.client.getTask(id)).status).toBe('working');
    await other.client.cancelTask(id);
    await waitFor(() => fake.disconnects === 1, 10_000, 'the model request to be aborted');
    expect((await other.client.poll(id)).status).toBe('cancelled');
    expect((await owner.client.getTask(id)).status).toBe('cancelled');
    const store = new FileRunStore(state);
    expect((await store.read(id))?.summary.status).toBe('cancelled');
    await store.close();
  });

  it('an ask node: input_required with the question as a form, answered with tasks/update', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', {
      name: 'pick',
      desc: 'asks, then writes',
      nodes: [
        { name: 'Q', type: 'ask', question: 'Topic for {{ ctx.input }}?', next: 'Write' },
        { name: 'Write', usr_prompt: 'write about {{ out.Q }}' },
      ],
    });
    const { url } = await serve(dir, stateDir());
    // A client that declares forms gets the question as its task's form.
    const client = new TasksClient({ url, capabilities: { elicitation: {} } });
    const created = await client.callTool('pick', { input: 'a poem' });
    expect(created).toMatchObject({ resultType: 'task', status: 'input_required' });
    const id = created.taskId as string;
    const waiting = await client.getTask(id);
    expect(waiting.inputRequests?.['ask-1']?.params).toMatchObject({ message: 'Topic for a poem?' });
    await client.updateTask(id, { 'ask-1': { action: 'accept', content: { answer: 'the sea' } } });
    const done = await client.poll(id);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('echo: write about the sea');
  });

  it('survives a SIGKILL: interrupted after a restart, working again when resumed, then completed', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', droneDef('slow'));
    const state = stateDir();
    fake.enqueue({ text: 'lost', delayMs: 60_000 });
    const first = await serve(dir, state, ['--task-wait', '0']);
    const id = (await first.client.callTool('slow', { input: 'one' })).taskId as string;
    await waitFor(() => fake.requests.length === 1, 10_000, 'the model request');
    first.child.kill('SIGKILL');
    await exited(first.child);

    // Restarted without --resume-interrupted: the task answers from the journal, honestly failed.
    const second = await serve(dir, state);
    const interrupted = await second.client.getTask(id);
    expect(interrupted.status).toBe('failed');
    expect(interrupted.error?.code).toBe(-32603);
    expect(interrupted.statusMessage).toMatch(/interrupted.*hatchery_resume.*--resume-interrupted/s);
    // hatchery_resume continues it under the same id: the task is working again, then completed.
    const resumed = await second.client.callTool('hatchery_resume', { run_id: id });
    expect(resumed.isError).toBeUndefined();
    const done = await second.client.poll(id);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('echo: one');
    second.child.kill('SIGTERM');
    await exited(second.child);

    // Killed again mid-run, and restarted with --resume-interrupted: the task completes by itself.
    fake.enqueue({ text: 'lost again', delayMs: 60_000 });
    const third = await serve(dir, state, ['--task-wait', '0']);
    const again = (await third.client.callTool('slow', { input: 'two' })).taskId as string;
    await waitFor(() => fake.requests.length === 3, 10_000, 'the second model request');
    third.child.kill('SIGKILL');
    await exited(third.child);
    const fourth = await serve(dir, state, ['--resume-interrupted']);
    const finished = await fourth.client.poll(again);
    expect(finished.status).toBe('completed');
    expect(textOf(finished.result)).toBe('echo: two');
  });
});
