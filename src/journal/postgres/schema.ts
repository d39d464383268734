/**
 * The tables of the Postgres run store, in a schema of their own (`hatchery`) beside DBOS's (`dbos`):
 * created or brought up to date at start-up, under a transaction-scoped advisory lock, so two replicas
 * starting at once on a fresh database migrate it once and neither fails.
 */
import type pg from 'pg';

/** The schema of the run store's tables. */
export const SCHEMA = 'hatchery';

/** Version of the tables below; a database at a later version is refused (an older hatchery-mcp). */
export const SCHEMA_VERSION = 2;

/** The advisory lock key of migrations (any constant: it names this store's migrations in the database). */
const MIGRATION_LOCK = 0x68617463; // "hatc"

/**
 * Each version's statements, applied in order from the database's version. `runs` holds one row per
 * run (its meta, status and owning replica); `chunks` the run's journal text in the order written (a
 * chunk is one flush of JSON lines, as a file store appends them); `replicas` the processes using the
 * store and their heartbeats; `step_memos` (version 2) the outcomes of steps made inside a step,
 * until their run ends (memos.ts).
 */
const MIGRATIONS: readonly string[][] = [
  [
    `CREATE TABLE ${SCHEMA}.runs (
      id uuid PRIMARY KEY,
      hatchery text NOT NULL,
      file text NOT NULL,
      status text NOT NULL,
      source text NOT NULL,
      started_at bigint NOT NULL,
      ended_at bigint,
      owner text,
      cancel_requested boolean NOT NULL DEFAULT false,
      next_chunk integer NOT NULL DEFAULT 0
    )`,
    `CREATE INDEX runs_started ON ${SCHEMA}.runs (started_at DESC)`,
    `CREATE INDEX runs_running ON ${SCHEMA}.runs (owner) WHERE status = 'running'`,
    `CREATE TABLE ${SCHEMA}.chunks (
      run_id uuid NOT NULL REFERENCES ${SCHEMA}.runs (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      text text NOT NULL,
      PRIMARY KEY (run_id, seq)
    )`,
    `CREATE TABLE ${SCHEMA}.replicas (
      id text PRIMARY KEY,
      host text NOT NULL,
      pid integer NOT NULL,
      since bigint NOT NULL,
      heartbeat_at timestamptz NOT NULL
    )`,
  ],
  [
    // No reference to runs: a branch's first call may end before the run's row is written.
    `CREATE TABLE ${SCHEMA}.step_memos (
      run_id uuid NOT NULL,
      attempt integer NOT NULL,
      key text NOT NULL,
      name text NOT NULL,
      outcome text NOT NULL,
      PRIMARY KEY (run_id, attempt, key)
    )`,
  ],
];

/** Runs `fn` in a transaction on one client of `pool`: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Brings the store's tables to SCHEMA_VERSION; safe to call from several processes at once. */
export function migrate(pool: pg.Pool, location: string): Promise<void> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.version (version integer NOT NULL)`);
    const row = (await client.query<{ version: number }>(`SELECT version FROM ${SCHEMA}.version`)).rows[0];
    const at = row?.version ?? 0;
    if (at > SCHEMA_VERSION) {
      throw new Error(
        `the run store in ${location} is at version ${at}, newer than this hatchery-mcp knows (${SCHEMA_VERSION}); upgrade hatchery-mcp`,
      );
    }
    for (let v = at; v < SCHEMA_VERSION; v++) for (const sql of MIGRATIONS[v]!) await client.query(sql);
    if (row === undefined) await client.query(`INSERT INTO ${SCHEMA}.version VALUES ($1)`, [SCHEMA_VERSION]);
    else if (at < SCHEMA_VERSION)
      await client.query(`UPDATE ${SCHEMA}.version SET version = $1`, [SCHEMA_VERSION]);
  });
}
