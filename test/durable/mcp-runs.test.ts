/**
 * Durable runs over MCP, through the built CLI: a background run survives a SIGKILL of its server
 * (interrupted, then resumed without paying again for finished nodes), hatchery_runs lists the
 * journal, hatchery_resume continues a run, and a run that asks a question suspends and is answered
 * with hatchery_respond by a client without elicitation.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText, type WireBody } from '../fakes/http.js';
import { tempDir } from '../helpers.js';
import { fakeEnv, hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';
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

/** True once the run's journal file holds a record of node `node` starting (journal writes are batched). */
function journaled(state: string, id: string, node: string): boolean {
  try {
    return readFileSync(path.join(state, `${id}.jsonl`), 'utf8').includes(
      `"type":"node_start","node":"${node}"`,
    );
  } catch {
    return false;
  }
}

type Client = Awaited<ReturnType<typeof spawnCli>>['client'];

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const res = await client.callTool({ name, arguments: args });
  return { res, text: textOf(res), data: res.structuredContent as Record<string, unknown> | undefined };
}

/** The runs a hatchery_runs result lists. */
function runsOf(r: { data?: Record<string, unknown> }): Record<string, unknown>[] {
  return (r.data?.runs ?? []) as Record<string, unknown>[];
}

describe('durable runs over MCP', () => {
  it('a background run survives a SIGKILL of its server and completes after --resume-interrupted, without calling finished nodes again', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain.json', chain);
    const state = tempDir('hatchery-state-');
    script(60_000);
    const first = await spawnCli(dir, { env, args: ['--state', state] });
    const started = await call(first.client, 'hatchery_start', { name: 'chain', input: 'the task' });
    const id = String(started.data?.run_id);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // A has finished and B's model call is in flight when the server dies.
    await waitFor(() => callsFor('B') === 1, 15_000, 'the model call of node B');
    await waitFor(() => journaled(state, id, 'B'), 15_000, 'the journal record of node B starting');
    process.kill(first.transport.pid!, 'SIGKILL');
    await first.close().catch(() => undefined);
    expect(readdirSync(state).some((f) => f.startsWith(id))).toBe(true);

    script(0);
    const second = await spawnCli(dir, { env, args: ['--state', state, '--resume-interrupted'] });
    try {
      const result = await call(second.client, 'hatchery_result', { run_id: id, wait_seconds: 30 });
      expect(result.res.isError).toBeFalsy();
      expect(result.text).toBe('done C');
      // Node A finished before the kill: the resumed run took it from the journal.
      expect(callsFor('A')).toBe(0);
      expect(callsFor('B')).toBe(1);
      expect(callsFor('C')).toBe(1);
      const status = await call(second.client, 'hatchery_status', { run_id: id });
      expect(status.data).toMatchObject({ run_id: id, state: 'succeeded' });
      expect(String(status.data?.note)).toContain('interrupted');
      expect(second.stderr()).toContain(`run ${id} of chain was interrupted`);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('without --resume-interrupted the run is reported interrupted, and hatchery_resume continues it', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain.json', chain);
    const state = tempDir('hatchery-state-');
    script(60_000);
    const first = await spawnCli(dir, { env, args: ['--state', state] });
    const id = String(
      (await call(first.client, 'hatchery_start', { name: 'chain', input: 'x' })).data?.run_id,
    );
    await waitFor(() => callsFor('B') === 1, 15_000, 'the model call of node B');
    await waitFor(() => journaled(state, id, 'B'), 15_000, 'the journal record of node B starting');
    process.kill(first.transport.pid!, 'SIGKILL');
    await first.close().catch(() => undefined);

    script(0);
    // A restarted server has new sessions: runs from before are listed only with --list-all-runs.
    const second = await spawnCli(dir, { env, args: ['--state', state, '--list-all-runs'] });
    try {
      const status = await call(second.client, 'hatchery_status', { run_id: id });
      expect(status.data).toMatchObject({ run_id: id, state: 'interrupted', node: 'B' });
      expect(String(status.data?.next_step)).toContain('hatchery_resume');
      const listed = await call(second.client, 'hatchery_runs', { status: 'interrupted' });
      expect(runsOf(listed).map((r) => r.run_id)).toContain(id);

      const resumed = await call(second.client, 'hatchery_resume', { run_id: id });
      expect(resumed.res.isError).toBeFalsy();
      const result = await call(second.client, 'hatchery_result', { run_id: id, wait_seconds: 30 });
      expect(result.text).toBe('done C');
      expect(callsFor('A')).toBe(0);
      const after = await call(second.client, 'hatchery_runs', {});
      const run = runsOf(after).find((r) => r.run_id === id);
      expect(run).toMatchObject({ state: 'succeeded', hatchery: 'chain' });
      expect(Number(run?.input_tokens)).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('hatchery_resume refuses a run whose file changed, naming the node, and resumes it with force', async () => {
    const dir = hatcheryDir();
    const file = writeHatchery(dir, 'chain.json', chain);
    const state = tempDir('hatchery-state-');
    openai.reset();
    const reply = (body: WireBody) => {
      const step = /step (\w)/.exec(lastUserText(body.messages))?.[1] ?? '?';
      return step === 'C' ? { status: 400, message: 'bad request for C' } : { text: `done ${step}` };
    };
    for (let i = 0; i < 10; i++) openai.enqueue(reply);
    const cli = await spawnCli(dir, { env, args: ['--state', state] });
    try {
      const failedCall = await call(cli.client, 'chain', { input: 'x' });
      expect(failedCall.res.isError).toBe(true);
      const id = String(runsOf(await call(cli.client, 'hatchery_runs', { status: 'failed' }))[0]?.run_id);
      writeFileSync(
        file,
        JSON.stringify({
          ...chain,
          nodes: [
            chain.nodes[0],
            { ...chain.nodes[1], usr_prompt: 'step B, edited, after {{ out.A }}' },
            chain.nodes[2],
          ],
        }),
      );
      const refused = await call(cli.client, 'hatchery_resume', { run_id: id });
      expect(refused.res.isError).toBe(true);
      expect(refused.text).toContain('changed: B');
      expect(refused.text).toContain('force');

      script(0);
      await call(cli.client, 'hatchery_resume', { run_id: id, force: true });
      const result = await call(cli.client, 'hatchery_result', { run_id: id, wait_seconds: 20 });
      expect(result.text).toBe('done C');
      // A came before the first changed node: taken from the journal; B and C ran again.
      expect(callsFor('A')).toBe(0);
      expect(callsFor('B')).toBe(1);
    } finally {
      await cli.close();
    }
  }, 60_000);

  it('a run that asks suspends for a client without elicitation, and hatchery_respond answers it', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', pick);
    const state = tempDir('hatchery-state-');
    const cli = await spawnCli(dir, { env, args: ['--state', state] });
    try {
      const direct = await call(cli.client, 'pick', { input: 'the shed' });
      expect(direct.res.isError).toBe(true);
      expect(direct.text).toContain('Which colour for the shed?');
      expect(direct.text).toContain('hatchery_respond');

      const waiting = await call(cli.client, 'hatchery_runs', { status: 'input_required' });
      const runs = runsOf(waiting);
      expect(runs).toHaveLength(1);
      const id = String(runs[0]?.run_id);
      expect(direct.text).toContain(id);
      const status = await call(cli.client, 'hatchery_status', { run_id: id });
      expect(status.data).toMatchObject({
        state: 'input_required',
        question: { node: 'Pick', choices: ['red', 'blue'] },
      });

      const answered = await call(cli.client, 'hatchery_respond', { run_id: id, answer: 'blue' });
      expect(answered.res.isError).toBeFalsy();
      const result = await call(cli.client, 'hatchery_result', { run_id: id, wait_seconds: 20 });
      expect(result.text).toBe('painted blue');

      // A background run suspends the same way, and a suspended run can be cancelled.
      const bg = await call(cli.client, 'hatchery_start', { name: 'pick', input: 'the gate' });
      const bgId = String(bg.data?.run_id);
      const bgStatus = await waitFor(async () => {
        const s = await call(cli.client, 'hatchery_status', { run_id: bgId });
        return s.data?.state === 'input_required' ? s : undefined;
      });
      expect(bgStatus.text).toContain('Which colour for the gate?');
      const cancel = await call(cli.client, 'hatchery_cancel', { run_id: bgId });
      expect(cancel.data).toMatchObject({ run_id: bgId, state: 'cancelled' });
      // A cancelled run takes no answer any more.
      const late = await call(cli.client, 'hatchery_respond', { run_id: bgId, answer: 'red' });
      expect(late.res.isError).toBe(true);
      expect(late.text).toContain('not waiting for an answer');
      expect((await call(cli.client, 'hatchery_status', { run_id: bgId })).data?.state).toBe('cancelled');
    } finally {
      await cli.close();
    }
  }, 60_000);

  it('refuses bad run ids and arguments with clear errors, and keeps serving', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain.json', chain);
    const state = tempDir('hatchery-state-');
    const cli = await spawnCli(dir, { env, args: ['--state', state] });
    try {
      for (const id of ['../../etc/passwd', 'nope', '00000000-0000-4000-8000-000000000000']) {
        for (const tool of ['hatchery_status', 'hatchery_result', 'hatchery_resume', 'hatchery_cancel']) {
          const r = await call(cli.client, tool, { run_id: id });
          expect(r.res.isError, `${tool} ${id}`).toBe(true);
          expect(r.text).toContain('unknown run id');
        }
      }
      expect((await call(cli.client, 'hatchery_runs', { status: 'sleeping' })).text).toContain(
        '"status" must be one of',
      );
      expect((await call(cli.client, 'hatchery_runs', { limit: 0 })).text).toContain('"limit" must be');
      expect((await call(cli.client, 'hatchery_respond', { run_id: 'x' })).text).toContain(
        'missing argument "answer"',
      );
      const ok = await call(cli.client, 'hatchery_runs', {});
      expect(ok.res.isError).toBeFalsy();
      expect(String(ok.data?.journal)).toBe(path.resolve(state));
    } finally {
      await cli.close();
    }
  }, 30_000);
});
