/**
 * A graceful stop (the client closing stdin, SIGTERM) leaves background runs `interrupted`, not
 * `cancelled`: a later server started with --resume-interrupted finishes them without paying again
 * for the nodes that had finished, also when a server started in between without the flag. A run a
 * user cancelled stays cancelled and is never resumed.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { runCli, tempDir } from '../helpers.js';
import { fakeEnv, hatcheryDir, spawnCli, waitFor, writeHatchery } from '../mcp/helpers.js';
import { chain, chainCallsFor, scriptChain } from './chain.js';

const openai = new FakeOpenAI();
let env: Record<string, string>;

beforeAll(async () => {
  await openai.start();
  env = fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1');
});
afterAll(() => openai.close());

const script = (holdB: number) => scriptChain(openai, holdB);
const callsFor = (step: string) => chainCallsFor(openai, step);

/** The run's status as `runs show --json` reads it from the journal. */
async function statusOf(state: string, id: string): Promise<string> {
  const r = await runCli(['runs', 'show', id, '--json'], { env: { HATCHERY_STATE: state } });
  return String((JSON.parse(r.stdout) as { status: string }).status);
}

/** Stops a served CLI the way `how` says and waits for it to exit. */
async function stop(server: Awaited<ReturnType<typeof spawnCli>>, how: 'stdin closed' | 'SIGTERM') {
  const child = (server.transport as unknown as { _process: ChildProcess })._process;
  const exited = new Promise((r) => child.once('exit', r));
  if (how === 'stdin closed') child.stdin?.end();
  else child.kill('SIGTERM');
  await exited;
  await server.close().catch(() => undefined);
}

async function start(server: Awaited<ReturnType<typeof spawnCli>>, name: string): Promise<string> {
  const res = await server.client.callTool({ name: 'hatchery_start', arguments: { name, input: 'x' } });
  return String((res.structuredContent as { run_id: string }).run_id);
}

describe('a graceful stop of the server', () => {
  for (const how of ['stdin closed', 'SIGTERM'] as const) {
    it(`${how}: leaves a background run interrupted, and a later --resume-interrupted server finishes it`, async () => {
      const dir = hatcheryDir();
      writeHatchery(dir, 'chain.json', chain);
      const state = tempDir('hatchery-state-');
      const args = ['--state', state];
      script(60_000);
      const first = await spawnCli(dir, { env, args });
      const id = await start(first, 'chain');
      await waitFor(() => callsFor('B') === 1, 15_000, 'the model call of node B');
      await stop(first, how);
      expect(await statusOf(state, id)).toBe('interrupted');

      // A server without the flag leaves it as it is.
      const between = await spawnCli(dir, { env, args });
      await stop(between, 'stdin closed');
      expect(await statusOf(state, id)).toBe('interrupted');

      script(0);
      const last = await spawnCli(dir, { env, args: [...args, '--resume-interrupted'] });
      try {
        const res = await last.client.callTool({
          name: 'hatchery_result',
          arguments: { run_id: id, wait_seconds: 30 },
        });
        expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
        expect(JSON.stringify(res.content)).toContain('done C');
        // Node A finished before the stop: it is taken from the journal, not asked again.
        expect(callsFor('A')).toBe(0);
        expect(await statusOf(state, id)).toBe('succeeded');
      } finally {
        await last.close();
      }
    }, 90_000);
  }

  it('a run the user cancelled stays cancelled and is never resumed', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain.json', chain);
    const state = tempDir('hatchery-state-');
    const args = ['--state', state];
    script(60_000);
    const first = await spawnCli(dir, { env, args });
    const id = await start(first, 'chain');
    await waitFor(() => callsFor('B') === 1, 15_000, 'the model call of node B');
    await first.client.callTool({ name: 'hatchery_cancel', arguments: { run_id: id } });
    await waitFor(async () => (await statusOf(state, id)) === 'cancelled', 15_000, 'the run to be cancelled');
    await stop(first, 'SIGTERM');
    script(0);
    const last = await spawnCli(dir, { env, args: [...args, '--resume-interrupted'] });
    try {
      await last.client.listTools();
      expect(await statusOf(state, id)).toBe('cancelled');
      expect(callsFor('C')).toBe(0);
    } finally {
      await last.close();
    }
  }, 60_000);
});
