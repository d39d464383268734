/**
 * A call of a remote A2A agent is one checkpointed step on the durable engine: the replica that ran
 * it is killed later in the run, the other replica finishes the run, and the agent got one message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeA2aAgent } from '../fakes/fake-a2a.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { runCli } from '../helpers.js';
import { fakeEnv, hatcheryDir, spawnCli, waitFor, writeHatchery } from '../mcp/helpers.js';
import { testDatabase } from './database.js';
import { holdingStep, killed } from './processes.js';

const openai = new FakeOpenAI();
const agent = new FakeA2aAgent();
let env: Record<string, string>;
let url: string;

beforeAll(async () => {
  await Promise.all([openai.start(), agent.start()]);
  url = await testDatabase('a2a_step');
  env = { ...fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1'), HATCHERY_STORE: url };
});
afterAll(async () => {
  await Promise.all([openai.close(), agent.close()]);
});

describe('an A2A call on the durable engine', () => {
  it('is not sent again when another replica finishes the run after a crash', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'remote.json', {
      name: 'remote',
      desc: 'asks an agent, then two drones',
      a2aAgents: { far: { url: agent.url } },
      nodes: [
        {
          name: 'Ask',
          type: 'tool',
          tool_name: 'a2a:far#echo',
          tool_args: { message: 'crash {{ ctx.input }}' },
          next: 'N2',
        },
        { name: 'N2', usr_prompt: 'step 2 after {{ out.Ask }}', next: 'N3' },
        { name: 'N3', usr_prompt: 'step 3 after {{ out.N2 }}' },
      ],
    });
    openai.reset();
    const reply = holdingStep('2');
    for (let i = 0; i < 20; i++) openai.enqueue(reply);
    const args = (r: string) => [
      '--replica-id',
      `a2a-${r}`,
      '--heartbeat-timeout',
      '2',
      '--allow-host',
      new URL(agent.url).host,
    ];
    const [a, b] = await Promise.all([
      spawnCli(dir, { env, args: args('a') }),
      spawnCli(dir, { env, args: args('b') }),
    ]);
    try {
      const started = await a.client.callTool({
        name: 'hatchery_start',
        arguments: { name: 'remote', input: 'x' },
      });
      const id = String((started.structuredContent as { run_id: string }).run_id);
      await waitFor(() => openai.requests.length === 1, 15_000, 'the model call of N2');
      await killed(a);
      let run = { status: 'running', output: '' };
      for (let i = 0; i < 125 && (run.status === 'running' || run.status === 'interrupted'); i++) {
        await new Promise((r) => setTimeout(r, 200));
        run = JSON.parse(
          (await runCli(['runs', 'show', id, '--json'], { env: { HATCHERY_STORE: url } })).stdout,
        );
      }
      expect(run.status, b.stderr()).toBe('succeeded');
      expect(run.output).toBe('done 3');
      expect(agent.received.filter((m) => m.text === 'crash x')).toHaveLength(1);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);
});
