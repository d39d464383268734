/**
 * Two replicas on one database (issue 39): the replica running a five-drone chain is killed (SIGKILL)
 * while node 3 waits on the model; the other sees its heartbeat stop, claims the run and finishes it,
 * and the model is asked for nodes 1 and 2 once only: their steps come from the engine's checkpoints.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText, type WireBody } from '../fakes/http.js';
import { runCli } from '../helpers.js';
import { fakeEnv, hatcheryDir, spawnCli, waitFor, writeHatchery } from '../mcp/helpers.js';
import { testDatabase } from './database.js';

const openai = new FakeOpenAI();
let env: Record<string, string>;
let url: string;

beforeAll(async () => {
  await openai.start();
  url = await testDatabase('crash');
  env = { ...fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1'), HATCHERY_STORE: url };
});
afterAll(() => openai.close());

const STEPS = ['1', '2', '3', '4', '5'];
const chain = {
  name: 'chain5',
  desc: 'five steps',
  nodes: STEPS.map((s, i) => ({
    name: `N${s}`,
    usr_prompt: i === 0 ? 'step 1 of {{ ctx.input }}' : `step ${s} after {{ out.N${STEPS[i - 1]} }}`,
    ...(i < STEPS.length - 1 ? { next: `N${STEPS[i + 1]}` } : {}),
  })),
};

/** Requests the model received for step `s`. */
const callsFor = (s: string) =>
  openai.requests.filter((r) => lastUserText(r.body?.messages).startsWith(`step ${s} `)).length;

describe('a replica killed mid-run', () => {
  it('has its run finished by the other replica, without asking the model again for finished nodes', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain5.json', chain);
    openai.reset();
    let held = false;
    const reply = (body: WireBody) => {
      const step = /step (\d)/.exec(lastUserText(body.messages))?.[1] ?? '?';
      // The first call of node 3 waits: the replica is killed meanwhile.
      if (step === '3' && !held) {
        held = true;
        return { text: `done ${step}`, delayMs: 60_000 };
      }
      return { text: `done ${step}`, delayMs: 20 };
    };
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    const timeout = ['--heartbeat-timeout', '2'];
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'replica-a', ...timeout] });
    const b = await spawnCli(dir, { env, args: ['--replica-id', 'replica-b', ...timeout] });
    try {
      const started = await a.client.callTool({
        name: 'hatchery_start',
        arguments: { name: 'chain5', input: 'x' },
      });
      const id = String((started.structuredContent as { run_id: string }).run_id);
      await waitFor(() => callsFor('3') === 1, 15_000, 'the model call of node 3');
      const child = (a.transport as unknown as { _process: ChildProcess })._process;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;

      const show = async () =>
        JSON.parse(
          (await runCli(['runs', 'show', id, '--json'], { env: { HATCHERY_STORE: url } })).stdout,
        ) as {
          status: string;
          output?: string;
          nodes: { node: string }[];
        };
      let run = await show();
      const t0 = Date.now();
      while (run.status !== 'succeeded' && Date.now() - t0 < 25_000) {
        await new Promise((r) => setTimeout(r, 200));
        run = await show();
      }
      expect(run.status, b.stderr()).toBe('succeeded');
      expect(run.output).toBe('done 5');
      // Nodes 1 and 2 finished before the kill: asked once. Node 3 was in flight: asked again.
      expect([callsFor('1'), callsFor('2'), callsFor('3'), callsFor('4'), callsFor('5')]).toEqual([
        1, 1, 2, 1, 1,
      ]);
      // The journal shows each node once: the replayed ones are not reported again.
      expect(run.nodes.map((n) => n.node)).toEqual(['N1', 'N2', 'N3', 'N4', 'N5']);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);
});
