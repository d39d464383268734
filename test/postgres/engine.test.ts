/**
 * Runs on the durable engine, from the shell: a question asked in one process is answered through
 * another; the engine's checkpoints, like the journal, never hold a secret.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { runCli, tempDir, writeHatchery } from '../helpers.js';
import { fakeEnv } from '../mcp/helpers.js';
import { testDatabase } from './database.js';

const KEY = 'sk-engine-secret-0123456789abcdef';
const openai = new FakeOpenAI();
let url: string;
let env: Record<string, string>;

beforeAll(async () => {
  await openai.start();
  url = await testDatabase('engine');
  env = { ...fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1'), OPENAI_API_KEY: KEY, HATCHERY_STORE: url };
});
afterAll(() => openai.close());

/** Every text the database holds of the runs: the journal's chunks and DBOS's steps, inputs and outputs. */
async function everythingStored(): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const parts: unknown[] = [];
    for (const sql of [
      'SELECT text FROM hatchery.chunks',
      'SELECT output, error FROM dbos.operation_outputs',
      'SELECT inputs FROM dbos.workflow_input',
      'SELECT output, error FROM dbos.workflow_output',
    ]) {
      parts.push((await c.query(sql)).rows);
    }
    return JSON.stringify(parts);
  } finally {
    await c.end();
  }
}

describe('the durable engine', () => {
  it('checkpoints each model call without the secrets it carried, as the journal keeps it', async () => {
    const dir = tempDir('hatchery-engine-');
    const file = writeHatchery(dir, 'leak.json', {
      name: 'leak',
      desc: 'a model that echoes the key',
      nodes: [{ name: 'A', usr_prompt: 'say it' }],
    });
    openai.reset();
    openai.enqueue(`the key is ${KEY}`);
    const r = await runCli(['run', file, '--json'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).output).toBe('the key is [redacted]');
    const stored = await everythingStored();
    expect(stored).toContain('the key is [redacted]');
    expect(stored).not.toContain(KEY);
  });

  it('asks a question in one process and goes on with the answer given through another', async () => {
    const dir = tempDir('hatchery-engine-');
    const file = writeHatchery(dir, 'colour.json', {
      name: 'colour',
      desc: 'asks for a colour',
      nodes: [
        { name: 'Q', type: 'ask', question: 'Which colour?', choices: ['red', 'blue'], next: 'Say' },
        { name: 'Say', type: 'baneling', tool_name: 'echo', tool_args: { text: 'colour {{ out.Q }}' } },
      ],
    });
    const asked = await runCli(['run', file, '--json'], { cwd: dir, env });
    expect(asked.code, asked.stderr).toBe(4);
    const id = String(JSON.parse(asked.stdout).runId);
    const answered = await runCli(['runs', 'resume', id, '--answer', 'blue', '--json'], { cwd: dir, env });
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout).output).toBe('colour blue');
    const show = JSON.parse((await runCli(['runs', 'show', id, '--json'], { env })).stdout);
    expect(show).toMatchObject({ status: 'succeeded', attempts: 2, output: 'colour blue' });
    // One DBOS workflow per attempt: the run's id, then <id>:2.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const wf = await c.query(
      `SELECT workflow_uuid, status FROM dbos.workflow_status WHERE workflow_uuid LIKE $1 ORDER BY workflow_uuid`,
      [`${id}%`],
    );
    await c.end();
    expect(wf.rows).toEqual([
      { workflow_uuid: id, status: 'SUCCESS' },
      { workflow_uuid: `${id}:2`, status: 'SUCCESS' },
    ]);
  });
});
