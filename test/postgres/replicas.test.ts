/**
 * Two `serve` replicas over stdio on one database (issue 39), through their MCP tools: a run started
 * through one is seen, listed, cancelled and answered through the other, and a run whose hatchery
 * file changed before its replica died is not run again by the other (its definition hash differs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText } from '../fakes/http.js';
import { runCli } from '../helpers.js';
import { fakeEnv, hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';
import { testDatabase } from './database.js';
import { holdingStep, killed } from './processes.js';

const openai = new FakeOpenAI();
let env: Record<string, string>;
let url: string;
/** Held model replies, let go at the end so that no request hangs past the file. */
const gates: (() => void)[] = [];

beforeAll(async () => {
  await openai.start();
  url = await testDatabase('replicas');
  env = { ...fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1'), HATCHERY_STORE: url };
});
afterAll(async () => {
  for (const open of gates) open();
  await openai.close();
});

type Replica = Awaited<ReturnType<typeof spawnCli>>;

/** A served CLI on `dir` with replica id `id`, sharing the test's database. */
function replica(dir: string, id: string, ...args: string[]): Promise<Replica> {
  return spawnCli(dir, { env, args: ['--replica-id', id, ...args] });
}

/** A tool call: its structured content, its readable text and whether it is an error. */
async function call(r: Replica, name: string, args: Record<string, unknown>) {
  const res = (await r.client.callTool({ name, arguments: args })) as {
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
  };
  return { data: res.structuredContent ?? {}, text: textOf(res), isError: res.isError === true };
}

/** hatchery_status of run `id` through `r`, once its state is `state`. */
function stateThrough(r: Replica, id: string, state: string, ms = 20_000) {
  return waitFor(
    async () => {
      const s = await call(r, 'hatchery_status', { run_id: id });
      return s.data.state === state ? s : undefined;
    },
    ms,
    `state ${state} of run ${id}`,
  );
}

/** A promise with its resolve, to hold a fake model reply until the test lets it go. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  gates.push(open);
  return { wait, open };
}

/** The run as `runs show --json` reads it from the database, in a process of its own. */
async function shown(id: string): Promise<{ status: string; output?: string; attempts?: number }> {
  const r = await runCli(['runs', 'show', id, '--json'], { env: { HATCHERY_STORE: url } });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** Requests the model received whose last user message starts with `prefix`. */
const asked = (prefix: string) =>
  openai.requests.filter((r) => lastUserText(r.body?.messages).startsWith(prefix));

/** A chain of drones `S1 -> S2 -> ...`, each prompt starting "step N "; `prompts` replaces some. */
function chain(name: string, steps: number, prompts: Record<number, string> = {}) {
  return {
    name,
    desc: `${steps} steps`,
    nodes: Array.from({ length: steps }, (_, i) => ({
      name: `S${i + 1}`,
      usr_prompt:
        prompts[i + 1] ?? (i === 0 ? 'step 1 of {{ ctx.input }}' : `step ${i + 1} after {{ out.S${i} }}`),
      ...(i < steps - 1 ? { next: `S${i + 2}` } : {}),
    })),
  };
}

describe('two serve replicas on one database', () => {
  it('shows a run started through one in the status and the run list of the other', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'two.json', chain('two', 2));
    openai.reset();
    const held = gate();
    openai.enqueue(
      async () => {
        await held.wait;
        return { text: 'first draft' };
      },
      { text: 'final text', delayMs: 20 },
    );
    const a = await replica(dir, 'status-a');
    // hatchery_runs lists only a session's own runs unless the server lists all.
    const b = await replica(dir, 'status-b', '--list-all-runs');
    try {
      const started = await call(a, 'hatchery_start', { name: 'two', input: 'owls' });
      expect(started.isError, started.text).toBe(false);
      const id = String(started.data.run_id);
      // hatchery_start answers once the run is in the database: the other replica knows it at once.
      const running = await call(b, 'hatchery_status', { run_id: id });
      expect(running.isError, running.text).toBe(false);
      await waitFor(() => asked('step 1 ').length === 1, 15_000, 'the model call of S1');
      expect(running.data).toMatchObject({
        run_id: id,
        hatchery: 'two',
        state: 'running',
      });
      const listed = await call(b, 'hatchery_runs', {});
      expect(listed.data.runs).toEqual([
        expect.objectContaining({ run_id: id, hatchery: 'two', state: 'running' }),
      ]);

      held.open();
      const done = await stateThrough(b, id, 'succeeded');
      expect(done.data.outputs).toEqual({ S1: 'first draft', S2: 'final text' });
      expect(done.data.steps).toBe(2);
      const result = await call(b, 'hatchery_result', { run_id: id });
      expect(result.isError, result.text).toBe(false);
      expect(result.text).toBe('final text');
      const after = await call(b, 'hatchery_runs', { status: 'succeeded' });
      expect(after.data.runs).toEqual([
        expect.objectContaining({ run_id: id, state: 'succeeded', steps: 2 }),
      ]);
      // The replica that ran it agrees.
      expect((await call(a, 'hatchery_status', { run_id: id })).data.state).toBe('succeeded');
      expect(asked('step 1 ')).toHaveLength(1);
      expect(asked('step 2 ')).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  it('cancels through one replica a run the other runs: it stops there, before its next node', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', chain('slow', 2));
    openai.reset();
    openai.enqueue({ text: 'never seen', delayMs: 60_000 }, { text: 'nor this', delayMs: 20 });
    const a = await replica(dir, 'cancel-a');
    const b = await replica(dir, 'cancel-b');
    try {
      const started = await call(a, 'hatchery_start', { name: 'slow', input: 'bats' });
      const id = String(started.data.run_id);
      await waitFor(() => asked('step 1 ').length === 1, 15_000, 'the model call of S1');

      const cancel = await call(b, 'hatchery_cancel', { run_id: id });
      expect(cancel.isError, cancel.text).toBe(false);
      expect(cancel.data).toMatchObject({ run_id: id, note: 'cancel requested' });

      const fromB = await stateThrough(b, id, 'cancelled');
      expect(fromB.data.run_id).toBe(id);
      // A's own view comes from its memory: cancelled only once the run has ended in A's process.
      await stateThrough(a, id, 'cancelled');
      expect((await shown(id)).status).toBe('cancelled');
      const result = await call(b, 'hatchery_result', { run_id: id });
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/cancel/);
      // The model call in flight was aborted, and the run, over in A, never asked for S2.
      await waitFor(() => asked('step 1 ')[0]?.disconnected, 10_000, 'the model call to be aborted');
      expect(asked('step 1 ')).toHaveLength(1);
      expect(asked('step 2 ')).toHaveLength(0);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  it('answers through one replica the question of a run started through the other', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'review.json', {
      name: 'review',
      desc: 'drafts, asks, polishes',
      nodes: [
        { name: 'Draft', usr_prompt: 'draft {{ ctx.input }}', next: 'Q' },
        { name: 'Q', type: 'ask', question: 'Which tone?', choices: ['dry', 'warm'], next: 'Polish' },
        { name: 'Polish', usr_prompt: 'polish {{ out.Draft }} in a {{ out.Q }} tone' },
      ],
    });
    openai.reset();
    openai.enqueue({ text: 'a draft', delayMs: 20 }, { text: 'polished', delayMs: 20 });
    // The test's clients take no elicitation: the question suspends the run (input_required).
    const a = await replica(dir, 'answer-a');
    const b = await replica(dir, 'answer-b');
    try {
      const started = await call(a, 'hatchery_start', { name: 'review', input: 'owls' });
      const id = String(started.data.run_id);
      const waiting = await stateThrough(b, id, 'input_required');
      expect(waiting.data.question).toMatchObject({ node: 'Q', choices: ['dry', 'warm'] });
      expect(waiting.data.next_step).toMatch(/hatchery_respond/);
      expect(waiting.data.outputs).toEqual({ Draft: 'a draft' });

      const answered = await call(b, 'hatchery_respond', { run_id: id, answer: 'warm' });
      expect(answered.isError, answered.text).toBe(false);
      const result = await call(b, 'hatchery_result', { run_id: id, wait_seconds: 20 });
      expect(result.isError, result.text).toBe(false);
      expect(result.text).toBe('polished');
      // The answer is in the next node's prompt; the draft was taken from the journal, not asked again.
      expect(asked('polish ').map((r) => lastUserText(r.body.messages))).toEqual([
        'polish a draft in a warm tone',
      ]);
      expect(asked('draft ')).toHaveLength(1);
      expect(openai.requests).toHaveLength(2);
      expect(await shown(id)).toMatchObject({ status: 'succeeded', output: 'polished', attempts: 2 });
      // The replica where it stopped to ask reads it from the database now, not as it left it.
      const fromA = await call(a, 'hatchery_status', { run_id: id });
      expect(fromA.data).toMatchObject({ run_id: id, state: 'succeeded' });
      const resultA = await call(a, 'hatchery_result', { run_id: id, wait_seconds: 0 });
      expect(resultA.isError, resultA.text).toBe(false);
      expect(resultA.text).toBe('polished');
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  it('leaves interrupted a run whose file changed before its replica died, naming the changed node', async () => {
    // One folder for both: a replica runs again only runs of the file it serves at the same path
    // (servesRun compares the resolved paths), so the refusal comes from the definition hash.
    const dir = hatcheryDir();
    const file = writeHatchery(dir, 'chain3.json', chain('chain3', 3));
    openai.reset();
    // S2 waits: its replica is killed meanwhile.
    const reply = holdingStep('2');
    for (let i = 0; i < 20; i++) openai.enqueue(reply);
    const timeout = ['--heartbeat-timeout', '2'];
    const a = await replica(dir, 'changed-a', ...timeout);
    const b = await replica(dir, 'changed-b', ...timeout);
    try {
      const started = await call(a, 'hatchery_start', { name: 'chain3', input: 'x' });
      const id = String(started.data.run_id);
      await waitFor(() => asked('step 2 ').length === 1, 15_000, 'the model call of S2');
      // The prompt of S3, which has not run yet, changes under the running run.
      writeHatchery(dir, 'chain3.json', chain('chain3', 3, { 3: 'step 3 (new) after {{ out.S2 }}' }));
      await killed(a);

      await waitFor(
        () => b.stderr().includes(`changed since run ${id} started`),
        30_000,
        'the refusal on the other replica',
      );
      const line = b
        .stderr()
        .split('\n')
        .find((l) => l.includes(`changed since run ${id} started`))!;
      expect(line).toContain(file);
      expect(line).toContain('(changed: S3)');
      expect(b.stderr()).not.toContain('is not a run of a file this process serves');
      expect((await shown(id)).status).toBe('interrupted');
      const status = await call(b, 'hatchery_status', { run_id: id });
      expect(status.data).toMatchObject({
        state: 'interrupted',
        next_step: expect.stringMatching(/hatchery_resume/),
      });
      // Nothing was asked again: S1 once, S2 once (the killed call), S3 never.
      expect([asked('step 1 ').length, asked('step 2 ').length, asked('step 3 ').length]).toEqual([1, 1, 0]);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);
});
