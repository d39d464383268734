/**
 * Run slots on the engine (issue 39): `--max-concurrent` and a hatchery's `max_concurrent` are DBOS
 * queues every replica shares, so two replicas with a limit of 4 never run more than 4 runs at once,
 * counted where it costs: at the model. A slot of a call cancelled while it waits, and one whose
 * replica died, are freed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText, type WireBody } from '../fakes/http.js';
import { runCli } from '../helpers.js';
import { droneDef, fakeEnv, hatcheryDir, spawnCli, waitFor, writeHatchery } from '../mcp/helpers.js';
import { queryRows, testDatabase } from './database.js';
import { killed } from './processes.js';

const openai = new FakeOpenAI();
let env: Record<string, string>;
let url: string;

beforeAll(async () => {
  await openai.start();
  url = await testDatabase('queue');
  env = { ...fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1'), HATCHERY_STORE: url };
});
afterAll(() => openai.close());

/** Model calls in flight now and at most, by the prompt's first word (the hatchery's name). */
class InFlight {
  readonly now = new Map<string, number>();
  readonly peak = new Map<string, number>();

  /**
   * A reply that counts its request while it waits `delayMs`; one that `hang` picks is not counted
   * and answers in a minute, or never when its replica dies.
   */
  reply(delayMs: number, hang?: (prompt: string) => boolean) {
    return async (body: WireBody) => {
      const prompt = lastUserText(body.messages);
      if (hang?.(prompt)) return { text: `done ${prompt}`, delayMs: 60_000 };
      const who = prompt.split(' ')[0]!;
      this.count(who, 1);
      this.count('all', 1);
      await new Promise((r) => setTimeout(r, delayMs));
      this.count(who, -1);
      this.count('all', -1);
      return { text: `done ${prompt}` };
    };
  }

  private count(who: string, by: number): void {
    const n = (this.now.get(who) ?? 0) + by;
    this.now.set(who, n);
    this.peak.set(who, Math.max(this.peak.get(who) ?? 0, n));
  }
}

type Served = Awaited<ReturnType<typeof spawnCli>>;

/** Starts `input` as a background run of `name` through `replica`; its run id. */
async function start(replica: Served, name: string, input: string): Promise<string> {
  const r = await replica.client.callTool({ name: 'hatchery_start', arguments: { name, input } });
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return String((r.structuredContent as { run_id: string }).run_id);
}

/** The runs of the store, as `runs list --json` reads them in a process of its own. */
async function listed(): Promise<{ id: string; status: string }[]> {
  const out = await runCli(['runs', 'list', '--json', '--limit', '100'], { env: { HATCHERY_STORE: url } });
  return JSON.parse(out.stdout);
}

/** Waits until every run of `ids` ended; their statuses. */
async function ended(ids: readonly string[], ms = 40_000): Promise<string[]> {
  let runs = await listed();
  const status = () => ids.map((id) => runs.find((r) => r.id === id)?.status ?? 'absent');
  const t0 = Date.now();
  while (status().some((s) => s === 'running' || s === 'absent') && Date.now() - t0 < ms) {
    await new Promise((r) => setTimeout(r, 300));
    runs = await listed();
  }
  return status();
}

/** The rows of `text` run on the test's database. */
const sql = <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
  queryRows<T>(url, text, params);

/** Slot workflows DBOS still counts (waiting or granted): none once every run ended. */
async function slotsHeld(): Promise<number> {
  const rows = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM dbos.workflow_status
     WHERE name = 'hatchery.slot' AND status IN ('PENDING', 'ENQUEUED')`,
  );
  return rows[0]!.n;
}

/** Slot workflows waiting in their queue. */
async function waitingSlots(): Promise<number> {
  const rows = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM dbos.workflow_status WHERE name = 'hatchery.slot' AND status = 'ENQUEUED'`,
  );
  return rows[0]!.n;
}

describe('run slots shared by replicas', () => {
  it('keeps 20 runs started across two replicas within a global limit of 4', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'one.json', droneDef('one'));
    openai.reset();
    const flight = new InFlight();
    for (let i = 0; i < 20; i++) openai.enqueue(flight.reply(400));
    const limit = ['--max-concurrent', '4'];
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'queue-a', ...limit] });
    const b = await spawnCli(dir, { env, args: ['--replica-id', 'queue-b', ...limit] });
    try {
      const ids = await Promise.all(
        Array.from({ length: 20 }, (_, i) => start(i % 2 ? b : a, 'one', `one ${i}`)),
      );
      expect(await ended(ids)).toEqual(ids.map(() => 'succeeded'));
      expect(openai.requests.length).toBe(20);
      // Never more than 4 at once; and the runs did overlap (4 when the machine is not busy).
      expect(flight.peak.get('all'), a.stderr() + b.stderr()).toBeLessThanOrEqual(4);
      expect(flight.peak.get('all')).toBeGreaterThanOrEqual(2);
      expect(await slotsHeld()).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  }, 90_000);

  it("keeps a hatchery's max_concurrent across replicas, beside hatcheries without one", async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'solo.json', { ...droneDef('solo'), max_concurrent: 2 });
    writeHatchery(dir, 'free.json', droneDef('free'));
    openai.reset();
    const flight = new InFlight();
    for (let i = 0; i < 12; i++) openai.enqueue(flight.reply(500));
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'solo-a'] });
    const b = await spawnCli(dir, { env, args: ['--replica-id', 'solo-b'] });
    try {
      const ids = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          start(i % 2 ? b : a, i < 8 ? 'solo' : 'free', `${i < 8 ? 'solo' : 'free'} ${i}`),
        ),
      );
      expect(await ended(ids)).toEqual(ids.map(() => 'succeeded'));
      expect(flight.peak.get('solo')).toBeLessThanOrEqual(2);
      // The free runs are not held back by solo's queue: they are at the model before solo's last wave.
      const prompts = openai.requests.map((r) => lastUserText(r.body.messages));
      const lastFree = Math.max(...prompts.flatMap((p, i) => (p.startsWith('free') ? [i] : [])));
      expect(lastFree).toBeLessThan(prompts.length - 2);
    } finally {
      await a.close();
      await b.close();
    }
  }, 90_000);

  it('frees the place of a call cancelled while it waits, and the slot of a replica that died', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'one.json', droneDef('one'));
    openai.reset();
    const flight = new InFlight();
    // The first run's model call hangs: its replica is killed meanwhile; every other call is quick.
    let hung = false;
    const hang = (prompt: string) => {
      if (prompt !== 'one first' || hung) return false;
      hung = true;
      return true;
    };
    for (let i = 0; i < 10; i++) openai.enqueue(flight.reply(300, hang));
    const args = ['--max-concurrent', '1', '--heartbeat-timeout', '2'];
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'dead-a', ...args] });
    const b = await spawnCli(dir, { env, args: ['--replica-id', 'dead-b', ...args] });
    try {
      const first = await start(a, 'one', 'one first');
      await waitFor(() => openai.requests.length === 1, 15_000, 'the first run at the model');
      // A call that waits for the slot, then gives up: it must not keep a place in the queue.
      const gone = await start(b, 'one', 'one gone');
      const cancel = await b.client.callTool({ name: 'hatchery_cancel', arguments: { run_id: gone } });
      expect(cancel.isError, JSON.stringify(cancel.content)).toBeFalsy();
      const next = await start(b, 'one', 'one next');
      await killed(a);
      // b claims the first run and finishes it; the slot its dead replica took is freed, and the
      // waiting run gets it.
      expect(await ended([first, next])).toEqual(['succeeded', 'succeeded']);
      expect(openai.requests.map((r) => lastUserText(r.body.messages))).not.toContain('one gone');
      // The first run, claimed by b, went on in its slot: the next one waited for it.
      expect(flight.peak.get('all')).toBe(1);
      await waitFor(async () => (await slotsHeld()) === 0, 10_000, 'no slot held');
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 90_000);

  it('waits in a new place when its place in the queue was swept away', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'one.json', droneDef('one'));
    openai.reset();
    const flight = new InFlight();
    for (let i = 0; i < 4; i++) openai.enqueue(flight.reply(1_500));
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'swept-a', '--max-concurrent', '1'] });
    try {
      const first = await start(a, 'one', 'one first');
      const second = await start(a, 'one', 'one second');
      // As a sweep does to a holder it takes for dead: the waiting slot is cancelled.
      await waitFor(async () => (await waitingSlots()) === 1, 10_000, 'the second run waiting');
      await sql(`UPDATE dbos.workflow_status SET status = 'CANCELLED'
                 WHERE name = 'hatchery.slot' AND status = 'ENQUEUED'`);
      expect(await ended([first, second])).toEqual(['succeeded', 'succeeded']);
      expect(flight.peak.get('all')).toBe(1);
    } finally {
      await a.close();
    }
  }, 90_000);

  it('frees the slot of a run cancelled while its replica was dead', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'one.json', droneDef('one'));
    openai.reset();
    const flight = new InFlight();
    const hang = (prompt: string) => prompt === 'one stuck';
    for (let i = 0; i < 10; i++) openai.enqueue(flight.reply(100, hang));
    // Dead replicas are claimed after 6 s, slots swept every 2 s: the cancel comes before the claim.
    const args = ['--max-concurrent', '1', '--heartbeat-timeout', '6'];
    const a = await spawnCli(dir, { env, args: ['--replica-id', 'cancelled-a', ...args] });
    const b = await spawnCli(dir, { env, args: ['--replica-id', 'cancelled-b', ...args] });
    try {
      const stuck = await start(a, 'one', 'one stuck');
      await waitFor(() => openai.requests.length === 1, 15_000, 'the stuck run at the model');
      const next = await start(b, 'one', 'one next');
      await killed(a);
      const cancel = await runCli(['runs', 'cancel', stuck], { env: { HATCHERY_STORE: url } });
      expect(cancel.code, cancel.stderr).toBe(0);
      expect(await ended([stuck, next], 30_000)).toEqual(['cancelled', 'succeeded']);
      await waitFor(async () => (await slotsHeld()) === 0, 10_000, 'no slot held');
      // Its workflow is cancelled too, not left pending for DBOS to run again.
      const workflow = await sql<{ status: string }>(
        'SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1',
        [stuck],
      );
      expect(workflow).toEqual([{ status: 'CANCELLED' }]);
    } finally {
      await a.close().catch(() => {});
      await b.close();
    }
  }, 90_000);
});
