/**
 * Two replicas on one database (issue 39): the replica running a five-drone chain is killed (SIGKILL)
 * while node 3 waits on the model; the other sees its heartbeat stop, claims the run and finishes it,
 * and the model is asked for nodes 1 and 2 once only: their steps come from the engine's checkpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText, type WireBody } from '../fakes/http.js';
import { runCli, startCli } from '../helpers.js';
import { fakeEnv, hatcheryDir, spawnCli, waitFor, writeHatchery } from '../mcp/helpers.js';
import { queryRows, testDatabase } from './database.js';
import { holdingStep, killed } from './processes.js';

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

/** Two parallel branches, a tool loop, then a last drone. */
const FAN_NODES = [
  { name: 'Fan', type: 'parallel', branches: ['B1', 'B2'], next: 'Tools' },
  { name: 'B1', usr_prompt: 'branch 1 of {{ ctx.input }}' },
  { name: 'B2', usr_prompt: 'branch 2 of {{ ctx.input }}' },
  { name: 'Tools', usr_prompt: 'tools after {{ out.Fan }}', tools: ['read_file'], next: 'Last' },
  { name: 'Last', usr_prompt: 'last after {{ out.Tools }}' },
];

/** The first user message of a request: a tool loop's later turns add tool results after it. */
const firstUserText = (body: WireBody): string =>
  String(
    (body?.messages as { role: string; content: unknown }[] | undefined)?.find((m) => m.role === 'user')
      ?.content ?? '',
  );

/** Requests the model received for step `s`. */
const callsFor = (s: string) =>
  openai.requests.filter((r) => lastUserText(r.body?.messages).startsWith(`step ${s} `)).length;

/** Starts a background run of `name` (input "x") through `replica`; its id. */
async function startRun(replica: Awaited<ReturnType<typeof spawnCli>>, name: string): Promise<string> {
  const started = await replica.client.callTool({ name: 'hatchery_start', arguments: { name, input: 'x' } });
  return String((started.structuredContent as { run_id: string }).run_id);
}

/** Two replicas of `dir` with a heartbeat timeout of 2 s, ids `<name>-a` and `<name>-b`. */
function twoReplicas(dir: string, name: string) {
  const args = (r: string) => ['--replica-id', `${name}-${r}`, '--heartbeat-timeout', '2'];
  return Promise.all([spawnCli(dir, { env, args: args('a') }), spawnCli(dir, { env, args: args('b') })]);
}

/** Requests whose first user message starts with `prefix` (a tool loop's later turns included). */
const calls = (prefix: string) =>
  openai.requests.filter((r) => firstUserText(r.body).startsWith(prefix)).length;

/** The run as `runs show --json` reads it from the database, in a process of its own. */
interface ShownRun {
  status: string;
  output?: string;
  nodes: { node: string }[];
  steps?: number;
  code?: string;
  error?: string;
}

async function shown(id: string): Promise<ShownRun> {
  return JSON.parse((await runCli(['runs', 'show', id, '--json'], { env: { HATCHERY_STORE: url } })).stdout);
}

/** The run once it ended (neither running nor interrupted, as a claimed run is until resumed), or after `ms`. */
async function finished(id: string, ms = 25_000): Promise<ShownRun> {
  let run = await shown(id);
  const t0 = Date.now();
  while ((run.status === 'running' || run.status === 'interrupted') && Date.now() - t0 < ms) {
    await new Promise((r) => setTimeout(r, 200));
    run = await shown(id);
  }
  return run;
}

describe('a replica killed mid-run', () => {
  it('has its run finished by the other replica, without asking the model again for finished nodes', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain5.json', chain);
    openai.reset();
    // The first call of node 3 waits: the replica is killed meanwhile.
    const reply = holdingStep('3');
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    const [a, b] = await twoReplicas(dir, 'replica');
    try {
      const id = await startRun(a, 'chain5');
      await waitFor(() => callsFor('3') === 1, 15_000, 'the model call of node 3');
      await killed(a);

      const run = await finished(id);
      expect(run.status, b.stderr()).toBe('succeeded');
      expect(run.output).toBe('done 5');
      // Nodes 1 and 2 finished before the kill: asked once. Node 3 was in flight: asked again.
      expect(STEPS.map(callsFor)).toEqual([1, 1, 2, 1, 1]);
      // The journal shows each node once: the replayed ones are not reported again.
      expect(run.nodes.map((n) => n.node)).toEqual(['N1', 'N2', 'N3', 'N4', 'N5']);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);

  it('is handed over by a replica that stops (not a crash): the other finishes it at once', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain5.json', chain);
    openai.reset();
    const reply = holdingStep('3');
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    // The default timeout: waiting for a's heartbeat to age would take 30 s; a stop says so at once.
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'stopping-a'] });
    const b = await spawnCli(dir, { env, args: ['--replica-id', 'staying-b'] });
    try {
      const id = await startRun(a, 'chain5');
      await waitFor(() => callsFor('3') === 1, 15_000, 'the model call of node 3');
      // A graceful stop (its client goes away, as at a deploy): the call in flight is cancelled.
      await a.close();
      const run = await finished(id, 20_000);
      expect(run.status, b.stderr()).toBe('succeeded');
      // Node 3's call, cancelled by the stop, was not checkpointed as failed: b asked again.
      expect(STEPS.map(callsFor)).toEqual([1, 1, 2, 1, 1]);
      expect(run.nodes.map((n) => n.node)).toEqual(['N1', 'N2', 'N3', 'N4', 'N5']);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);

  it('is taken over by a server, never by a `run` command sharing the store', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain5.json', chain);
    const slow = writeHatchery(dir, 'slow.json', {
      name: 'slow',
      desc: 'one long model call',
      nodes: [{ name: 'S', usr_prompt: 'slow {{ ctx.input }}' }],
    });
    openai.reset();
    const chainReply = holdingStep('3');
    // The commands' runs stay at the model while the server's run is claimed.
    const reply = (body: WireBody) =>
      lastUserText(body.messages).startsWith('slow')
        ? { text: 'slow done', delayMs: 60_000 }
        : chainReply(body);
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    // Two `run` commands poll DBOS's queues beside the server: without care, they would get the run
    // two times out of three, and could only leave it interrupted.
    const commands = [1, 2].map((n) => startCli(['run', slow, '--input', `cli ${n}`], { env }));
    const [a, b] = await twoReplicas(dir, 'taken');
    try {
      await waitFor(
        () => openai.requests.filter((r) => lastUserText(r.body.messages).startsWith('slow')).length === 2,
        15_000,
        'both commands at the model',
      );
      const id = await startRun(a, 'chain5');
      await waitFor(() => callsFor('3') === 1, 15_000, 'the model call of node 3');
      await killed(a);
      const run = await finished(id);
      expect(run.status, b.stderr() + commands.map((c) => c.err()).join('')).toBe('succeeded');
      expect(STEPS.map(callsFor)).toEqual([1, 1, 2, 1, 1]);
      for (const c of commands) expect(c.err()).not.toContain(id);
    } finally {
      for (const c of commands) c.child.kill('SIGKILL');
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);

  it('replays branches and a tool loop in the same order after the kill', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'notes.txt', 'the notes');
    writeHatchery(dir, 'fan.json', {
      name: 'fan',
      desc: 'branches, then a tool loop, then a last drone',
      nodes: FAN_NODES,
    });
    openai.reset();
    let held = false;
    const reply = (body: WireBody) => {
      const text = firstUserText(body);
      if (text.startsWith('branch')) return { text: `done ${text.slice(0, 8)}`, delayMs: 20 };
      if (text.startsWith('tools')) {
        // First turn: two tool calls at once; second turn (their results follow): the answer.
        const results = (body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
        return results === 0
          ? {
              toolCalls: [
                { name: 'read_file', args: { path: 'notes.txt' } },
                { name: 'read_file', args: { path: 'fan.json' } },
              ],
            }
          : { text: `tools read ${results}` };
      }
      if (!held) {
        held = true;
        return { text: 'done last', delayMs: 60_000 };
      }
      return { text: 'done last' };
    };
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    const [a, b] = await twoReplicas(dir, 'fan');
    try {
      const id = await startRun(a, 'fan');
      await waitFor(() => calls('last') === 1, 15_000, 'the model call of node Last');
      await killed(a);
      const run = await finished(id);
      expect(run.status, b.stderr()).toBe('succeeded');
      expect(run.output).toBe('done last');
      // The branches and both turns of the tool loop were checkpointed: asked once each.
      expect([calls('branch 1'), calls('branch 2'), calls('tools'), calls('last')]).toEqual([1, 1, 2, 2]);
      // The node executions inside the replayed branches count as if they ran again.
      expect(run.steps).toBe(5);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);

  it('replays the calls a branch cut short had made, and makes only the one in flight again', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'notes.txt', 'the notes');
    // Branch 1 is a chain: a tool loop, then a drone the kill cuts short; branch 2 ends before it.
    writeHatchery(dir, 'cut.json', {
      name: 'cut',
      desc: 'a branch killed halfway',
      nodes: [
        { name: 'Fan', type: 'parallel', branches: ['B1', 'B2'], next: 'Last' },
        { name: 'B1', usr_prompt: 'branch 1 of {{ ctx.input }}', tools: ['read_file'], next: 'B1b' },
        { name: 'B1b', usr_prompt: 'branch 1b after {{ out.B1 }}' },
        { name: 'B2', usr_prompt: 'branch 2 of {{ ctx.input }}' },
        { name: 'Last', usr_prompt: 'last after {{ out.Fan }}' },
      ],
    });
    openai.reset();
    let held = false;
    const reply = (body: WireBody) => {
      const text = firstUserText(body);
      const results = (body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
      if (text.startsWith('branch 1 ') && results === 0)
        return { toolCalls: [{ name: 'read_file', args: { path: 'notes.txt' } }] };
      if (text.startsWith('branch 1b') && !held) {
        held = true;
        return { text: 'done 1b', delayMs: 60_000 };
      }
      return { text: `done ${text.slice(0, 9)}` };
    };
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    const [a, b] = await twoReplicas(dir, 'cut');
    try {
      const id = await startRun(a, 'cut');
      await waitFor(() => calls('branch 1b') === 1, 15_000, "the model call of branch 1's second node");
      // The journal (written a tenth of a second at a time) holds B1's and B2's ends when the kill comes.
      const journaled = async () => (await shown(id)).nodes.map((n) => n.node).sort();
      for (let t0 = Date.now(); (await journaled()).join() !== 'B1,B2' && Date.now() - t0 < 10_000; ) {
        await new Promise((r) => setTimeout(r, 100));
      }
      await killed(a);
      const run = await finished(id);
      expect(run.status, b.stderr()).toBe('succeeded');
      // Both turns of B1's tool loop come from what the crashed replica kept; B1b is asked again.
      expect([calls('branch 1 '), calls('branch 2'), calls('branch 1b'), calls('last')]).toEqual([
        2, 1, 2, 1,
      ]);
      // The journal tells each node and each call once: the replayed ones are not told again.
      expect(run.steps).toBe(5);
      expect(run.nodes.map((n) => n.node).sort()).toEqual(['B1', 'B1b', 'B2', 'Fan', 'Last']);
      const chunks = await queryRows(url, 'SELECT text FROM hatchery.chunks WHERE run_id = $1', [id]);
      const text = chunks.map((r) => String(r.text)).join('');
      // What was kept goes with the run's end.
      const kept = await queryRows(
        url,
        'SELECT count(*)::int AS n FROM hatchery.step_memos WHERE run_id = $1',
        [id],
      );
      const types = text
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { type: string }).type);
      expect(types.filter((t) => t === 'model_call')).toHaveLength(5);
      expect(types.filter((t) => t === 'tool_call')).toHaveLength(1);
      expect(kept).toEqual([{ n: 0 }]);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);

  it("counts what its replayed branches spent toward the run's budget", async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'notes.txt', 'the notes');
    // Four model calls allowed: two branches and a tool loop of two turns; Last would be the fifth.
    writeHatchery(dir, 'capped.json', {
      name: 'capped',
      desc: 'branches and a tool loop within a budget of four model calls',
      budget: { model_calls: 4 },
      nodes: FAN_NODES,
    });
    openai.reset();
    let held = false;
    const reply = (body: WireBody) => {
      const text = firstUserText(body);
      if (text.startsWith('branch')) return { text: `done ${text.slice(0, 8)}`, delayMs: 20 };
      const results = (body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
      if (text.startsWith('tools') && results === 0)
        return { toolCalls: [{ name: 'read_file', args: { path: 'notes.txt' } }] };
      // The tool loop's second turn hangs the first time: the replica is killed meanwhile.
      if (text.startsWith('tools') && !held) {
        held = true;
        return { text: 'tools read', delayMs: 60_000 };
      }
      return { text: text.startsWith('tools') ? 'tools read' : 'done last' };
    };
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    const [a, b] = await twoReplicas(dir, 'capped');
    try {
      const id = await startRun(a, 'capped');
      await waitFor(() => calls('tools') === 2, 15_000, "the tool loop's second turn");
      await killed(a);
      const run = await finished(id, 20_000);
      // As without the crash: the branches' calls count, so Last's would be the fifth, and is refused.
      expect(run.status, b.stderr()).toBe('failed');
      expect(run.code).toBe('BUDGET_EXHAUSTED');
      expect(calls('last')).toBe(0);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);

  it('is taken back by the same replica id when it starts again, its finished nodes not asked again', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain5.json', chain);
    openai.reset();
    const reply = holdingStep('2');
    for (let i = 0; i < 50; i++) openai.enqueue(reply);
    // A long heartbeat timeout: no other replica could take the run; only the restart does.
    const args = ['--replica-id', 'restarted', '--heartbeat-timeout', '600'];
    const first = await spawnCli(dir, { env, args });
    const id = await startRun(first, 'chain5');
    await waitFor(() => callsFor('2') === 1, 15_000, 'the model call of node 2');
    await killed(first);
    await first.close().catch(() => {});
    const again = await spawnCli(dir, { env, args });
    try {
      // The server builds its runtime (and the engine) on its first call.
      await again.client.callTool({ name: 'hatchery_list', arguments: {} });
      const { status } = await finished(id, 20_000);
      expect(status, again.stderr()).toBe('succeeded');
      expect(STEPS.map(callsFor)).toEqual([1, 2, 1, 1, 1]);
    } finally {
      await again.close();
    }
  }, 60_000);

  // Its heartbeat old (2 s): the cancel ends the run at once. Still fresh (600 s): the cancel is a flag
  // for an owner that will never see it, until the same id starts again and takes the run back.
  it.each([
    ['2', 'ended by the cancel'],
    ['600', 'flagged'],
  ])(
    'stays cancelled when cancelled while its replica was dead (heartbeat timeout %s s: %s), and its restart ends the workflow quietly',
    async (timeout) => {
      const dir = hatcheryDir();
      writeHatchery(dir, 'chain5.json', chain);
      openai.reset();
      const reply = holdingStep('2');
      for (let i = 0; i < 50; i++) openai.enqueue(reply);
      const args = ['--replica-id', `cancelled-dead-${timeout}`, '--heartbeat-timeout', timeout];
      const first = await spawnCli(dir, { env, args });
      const id = await startRun(first, 'chain5');
      await waitFor(() => callsFor('2') === 1, 15_000, 'the model call of node 2');
      await killed(first);
      await first.close().catch(() => {});
      if (timeout === '2') await new Promise((r) => setTimeout(r, 2_500));
      const cancel = await runCli(['runs', 'cancel', id], { env: { HATCHERY_STORE: url } });
      expect(cancel.code, cancel.stderr).toBe(0);
      const again = await spawnCli(dir, { env, args });
      const workflow = () =>
        queryRows<{ status: string }>(
          url,
          'SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1',
          [id],
        );
      try {
        await again.client.callTool({ name: 'hatchery_list', arguments: {} });
        // DBOS gives the restarted replica its pending workflow, which ends without running the run.
        await waitFor(async () => (await workflow())[0]?.status === 'SUCCESS', 15_000, 'the workflow to end');
        expect((await shown(id)).status).toBe('cancelled');
        expect(callsFor('2') + callsFor('3')).toBe(1);
        expect(again.stderr()).not.toContain('could not be run again');
      } finally {
        await again.close();
      }
    },
    60_000,
  );

  it("is left interrupted by a replica that does not serve the run's file", async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain5.json', chain);
    const other = hatcheryDir();
    writeHatchery(other, 'chain5.json', chain);
    openai.reset();
    for (let i = 0; i < 50; i++) openai.enqueue({ text: 'done', delayMs: 60_000 });
    const timeout = ['--heartbeat-timeout', '2'];
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'served-a', ...timeout] });
    // The same file name in another folder: not the file the run recorded.
    const b = await spawnCli(other, { env, args: ['--replica-id', 'elsewhere-b', ...timeout] });
    try {
      const id = await startRun(a, 'chain5');
      await waitFor(() => callsFor('1') === 1, 15_000, 'the model call of node 1');
      await killed(a);
      await waitFor(() => b.stderr().includes(`run ${id} of`), 20_000, 'the refusal on the other replica');
      expect(b.stderr()).toContain('is not a run of a file this process serves');
      expect((await shown(id)).status).toBe('interrupted');
      expect(callsFor('1')).toBe(1);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 60_000);
});
