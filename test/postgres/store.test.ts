/**
 * The run store on a real PostgreSQL server: the same RunStore as the state folder's, shared by
 * processes. Runs go in and read back as the file store reads them; claims and cancels of runs
 * another replica owns are taken once; the tables migrate once when replicas start together.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { SCHEMA_VERSION } from '../../src/journal/postgres/schema.js';
import { PostgresRunStore } from '../../src/journal/postgres/store.js';
import type { RunMeta } from '../../src/journal/store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';
import { queryRows, testDatabase } from './database.js';

const KEY = 'sk-postgres-key-0123456789abcdef';
let url: string;
const opened: PostgresRunStore[] = [];

async function open(options: Parameters<typeof PostgresRunStore.open>[1] = {}): Promise<PostgresRunStore> {
  const store = await PostgresRunStore.open(url, { env: {}, warn: () => {}, ...options });
  opened.push(store);
  return store;
}

beforeAll(async () => {
  url = await testDatabase('store');
});
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => {});
});

/** A run written by hand, owned by replica `owner` whose last heartbeat was `beatMsAgo`: what a dead process leaves. */
async function orphan(database: string, owner: string, beatMsAgo: number): Promise<string> {
  const id = crypto.randomUUID();
  const meta: RunMeta = {
    id,
    hatchery: 'orphan',
    file: '/x/orphan.json',
    hash: '0'.repeat(16),
    nodes: {},
    source: 'mcp',
    startedAt: Date.now(),
    owner: { pid: 999_999, host: 'elsewhere', since: 1, replica: owner },
  };
  const c = new pg.Client({ connectionString: database });
  await c.connect();
  await c.query(
    `INSERT INTO hatchery.replicas (id, host, pid, since, heartbeat_at)
     VALUES ($1, 'elsewhere', 999999, 1, now() - make_interval(secs => $2::double precision / 1000))
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at`,
    [owner, beatMsAgo],
  );
  await c.query(
    `INSERT INTO hatchery.runs (id, hatchery, file, status, source, started_at, owner)
     VALUES ($1, 'orphan', '/x/orphan.json', 'running', 'mcp', $2, $3)`,
    [id, meta.startedAt, owner],
  );
  const start = { v: 1, at: Date.now(), type: 'run_start', ...meta };
  await c.query(`INSERT INTO hatchery.chunks (run_id, seq, text) VALUES ($1, 0, $2)`, [
    id,
    `${JSON.stringify(start)}\n`,
  ]);
  await c.end();
  return id;
}

describe('the Postgres run store', () => {
  it('migrates once when replicas open a fresh database at the same moment', async () => {
    const fresh = await testDatabase('fresh');
    const stores = await Promise.all(
      ['a', 'b', 'c'].map((r) =>
        PostgresRunStore.open(fresh, { env: {}, replicaId: `fresh-${r}`, warn: () => {} }),
      ),
    );
    const v = await queryRows(fresh, 'SELECT version FROM hatchery.version');
    const replicas = await queryRows(fresh, 'SELECT id FROM hatchery.replicas ORDER BY id');
    for (const s of stores) await s.close();
    expect(v).toEqual([{ version: SCHEMA_VERSION }]);
    expect(replicas.map((r) => r.id)).toEqual(['fresh-a', 'fresh-b', 'fresh-c']);
  });

  it('brings a database of an earlier version up to date at start-up, keeping its runs', async () => {
    const older = await testDatabase('older');
    const first = await PostgresRunStore.open(older, { env: {}, replicaId: 'older', warn: () => {} });
    await first.close();
    // The database as version 1 left it: no step_memos table; and a run in it.
    await queryRows(older, 'DROP TABLE hatchery.step_memos');
    await queryRows(older, 'UPDATE hatchery.version SET version = 1');
    const id = await orphan(older, 'older-gone', 0);
    const stores = await Promise.all(
      ['a', 'b'].map((r) =>
        PostgresRunStore.open(older, { env: {}, replicaId: `older-${r}`, warn: () => {} }),
      ),
    );
    const listed = await stores[0]!.list();
    const v = await queryRows(older, 'SELECT version FROM hatchery.version');
    const memos = await queryRows(older, 'SELECT count(*)::int AS n FROM hatchery.step_memos');
    for (const s of stores) await s.close();
    expect(v).toEqual([{ version: SCHEMA_VERSION }]);
    expect(memos).toEqual([{ n: 0 }]);
    expect(listed.map((r) => r.id)).toContain(id);
  });

  it('keeps a run as the file store does: records in order, summary, listing, no secret', async () => {
    const store = await open({ replicaId: 'keep' });
    const dir = tempDir('hatchery-pg-');
    const model = new ScriptedProvider(
      (req: ChatRequest) => `seen ${String(req.messages.at(-1)?.content)} ${KEY}`,
    );
    const runtime = new Runtime({
      providers: { openai: model },
      env: { OPENAI_API_KEY: KEY },
      store,
      cwd: dir,
    });
    const h = load(
      hatch(
        [
          { name: 'A', model: 'openai:gpt-test', usr_prompt: 'hello {{ ctx.input }}', next: 'B' },
          echo('B', 'b got {{ out.A }}'),
        ],
        { name: 'pair' },
      ),
      dir,
    );
    const res = await runtime.run(h, { input: 'Ada', source: 'cli' });
    const run = await store.read(res.runId);
    expect(run?.records.map((r) => r.type)).toEqual([
      'run_start',
      'node_start',
      'model_call',
      'node_end',
      'node_start',
      'tool_call',
      'node_end',
      'run_end',
    ]);
    expect(run?.summary).toMatchObject({
      status: 'succeeded',
      hatchery: 'pair',
      steps: 2,
      source: 'cli',
      node: 'B',
    });
    expect(run?.summary.output).toBe('b got seen hello Ada [redacted]');
    expect(run?.meta.owner.replica).toBe('keep');
    expect(JSON.stringify(run)).not.toContain(KEY);
    expect((await store.list({ hatchery: 'pair' })).map((s) => s.id)).toEqual([res.runId]);
    expect(await store.list({ idPrefix: res.runId.slice(0, 8) })).toHaveLength(1);
    expect(await store.list({ idPrefix: "'; DROP TABLE hatchery.runs; --" })).toEqual([]);
    expect(await store.read('../../etc/passwd')).toBeUndefined();
    await expect(store.reopen('../../etc/passwd')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('records a failed run with its code and node, and an input_required one with its question', async () => {
    const store = await open({ replicaId: 'fail' });
    const dir = tempDir('hatchery-pg-');
    const question = { node: 'A', kind: 'ask', question: 'Which colour?', choices: ['red', 'blue'] };
    const model = new ScriptedProvider([
      new HatcheryError('PROVIDER', 'the model is down'),
      new HatcheryError('INPUT_REQUIRED', 'the run needs an answer', { node: 'A', question }),
    ]);
    const runtime = new Runtime({ providers: { openai: model }, env: {}, store, cwd: dir });
    const h = load(
      hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: 'x' }], { name: 'failing' }),
      dir,
    );
    const failed = (await runtime.run(h).catch((e: unknown) => e)) as HatcheryError;
    const asked = (await runtime.run(h).catch((e: unknown) => e)) as HatcheryError;
    const f = await store.read(String(failed.context.runId));
    const a = await store.read(String(asked.context.runId));
    expect(f?.summary).toMatchObject({ status: 'failed', code: 'PROVIDER', node: 'A' });
    expect(a?.summary).toMatchObject({ status: 'input_required', question });
    expect((await store.list({ status: 'input_required' })).map((s) => s.id)).toEqual([a?.meta.id]);
  });

  it("claims a dead replica's running run once, however many replicas try at the same time", async () => {
    const claimers = await Promise.all(['c1', 'c2', 'c3'].map((r) => open({ replicaId: `claim-${r}` })));
    const dead = await orphan(url, 'gone-replica', 120_000);
    const alive = await orphan(url, 'busy-replica', 0);
    expect((await claimers[1]!.read(dead))?.summary.status).toBe('interrupted');
    expect((await claimers[1]!.read(alive))?.summary.status).toBe('running');
    const results = await Promise.all(claimers.map((s) => s.claimInterrupted()));
    const ids = results.flat().map((s) => s.id);
    expect(ids.filter((id) => id === dead)).toHaveLength(1);
    expect(ids).not.toContain(alive);
    const run = await claimers[2]!.read(dead);
    expect(run?.records.map((r) => r.type)).toEqual(['run_start', 'interrupted']);
    expect(run?.summary.status).toBe('interrupted');
    // An interrupted run nobody owns is cancelled at once, through any replica.
    expect((await claimers[2]!.cancel(dead))?.status).toBe('cancelled');
    expect((await claimers[0]!.read(dead))?.summary.status).toBe('cancelled');
  });

  it('passes a cancel asked through one replica to the replica that runs the run', async () => {
    const owner = await open({ replicaId: 'owner', pollMs: 50 });
    const other = await open({ replicaId: 'other' });
    const dir = tempDir('hatchery-pg-');
    const runtime = new Runtime({ env: {}, store: owner, cwd: dir });
    const slow = load(
      hatch([{ name: 'S', type: 'script', cmd: [process.execPath, '-e', 'setTimeout(() => {}, 20000)'] }], {
        name: 'slow',
      }),
      dir,
    );
    const running = runtime.run(slow, { source: 'mcp' });
    let id: string | undefined;
    while (id === undefined) {
      id = (await other.list({ hatchery: 'slow', status: 'running' }))[0]?.id;
      if (id === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    expect((await other.cancel(id))?.status).toBe('running');
    await expect(running).rejects.toMatchObject({ code: 'ABORTED' });
    await owner.idle();
    expect((await other.read(id))?.summary).toMatchObject({ status: 'cancelled', node: 'S' });
  });

  it('resumes a run in another replica, refusing while its owner is alive', async () => {
    const a = await open({ replicaId: 'resume-a' });
    const b = await open({ replicaId: 'resume-b' });
    const dead = await orphan(url, 'resume-dead', 120_000);
    const live = await orphan(url, 'resume-live', 0);
    await expect(b.reopen(live)).rejects.toMatchObject({ code: 'RESUME_REFUSED' });
    const j = await b.reopen(dead, { from: 'A' });
    expect((await a.read(dead))?.summary.status).toBe('running');
    await j.end('succeeded', { output: 'done' });
    const run = await a.read(dead);
    expect(run?.records.map((r) => r.type)).toEqual(['run_start', 'resumed', 'run_end']);
    expect(run?.summary).toMatchObject({ status: 'succeeded', output: 'done', attempts: 2 });
    expect(run?.records[1]?.owner).toMatchObject({ replica: 'resume-b' });
  });

  it('prunes finished runs beyond the count kept, never an unfinished one', async () => {
    const fresh = await testDatabase('prune');
    const store = await PostgresRunStore.open(fresh, {
      env: {},
      replicaId: 'prune',
      maxRuns: 2,
      warn: () => {},
    });
    const runtime = new Runtime({ env: {}, store, cwd: tempDir('hatchery-pg-') });
    const h = load(hatch([echo('E', 'x')], { name: 'echoes' }));
    for (let i = 0; i < 5; i++) await runtime.run(h);
    const dead = await orphan(fresh, 'prune-dead', 120_000);
    await store.idle();
    expect(await store.prune()).toBe(3);
    const left = await store.list({ limit: 10 });
    expect(left.map((s) => s.status).sort()).toEqual(['interrupted', 'succeeded', 'succeeded']);
    expect(left.map((s) => s.id)).toContain(dead);
    await store.close();
  });

  it('refuses a second live process with the same replica id, and names a database it cannot reach without its password', async () => {
    await open({ replicaId: 'twin' });
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    // The twin's row as another host's live process holds it.
    await c.query(`UPDATE hatchery.replicas SET host = 'other-host', pid = 1 WHERE id = 'twin'`);
    await c.end();
    await expect(PostgresRunStore.open(url, { env: {}, replicaId: 'twin', warn: () => {} })).rejects.toThrow(
      /replica id "twin" is in use by process 1 on other-host/,
    );
    const bad = 'postgresql://someone:s3cret-pass@127.0.0.1:1/nowhere';
    const err = (await PostgresRunStore.open(bad, { env: {} }).catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('STORE');
    expect(err.message).toContain('postgresql://127.0.0.1:1/nowhere');
    expect(err.message).not.toContain('s3cret-pass');
  });
});
