/**
 * Changes to a run another process may be changing too (claims, cancels, resumes): made in one
 * transaction that holds the run's row lock, so of two replicas doing it at once one does it.
 */
import type pg from 'pg';
import { foldRun } from '../fold.js';
import { JOURNAL_VERSION, type RunSummary, type StoredRun } from '../store.js';
import { aliveSql } from './replicas.js';
import { SCHEMA } from './schema.js';

/**
 * Runs `fn` in a transaction holding run `id`'s row lock, with its journal text and whether its owner
 * is alive (a replica beating within `timeoutMs`, or one of `ownIds`, the runs this process owns);
 * undefined when there is no such run or another process holds the lock (it is doing the same).
 */
export async function lockedRun<T>(
  pool: pg.Pool,
  id: string,
  timeoutMs: number,
  ownIds: readonly string[],
  fn: (client: pg.PoolClient, text: string, alive: boolean) => Promise<T | undefined>,
): Promise<T | undefined> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const row = await client.query<{ alive: boolean }>(
      `SELECT (r.id = ANY($3::uuid[]) OR EXISTS (SELECT 1 FROM ${SCHEMA}.replicas p WHERE p.id = r.owner AND ${aliveSql(2)})) AS alive
       FROM ${SCHEMA}.runs r WHERE r.id = $1 FOR UPDATE SKIP LOCKED`,
      [id, timeoutMs, ownIds],
    );
    if (row.rows.length === 0) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const text = await client.query<{ text: string | null }>(
      `SELECT string_agg(text, '' ORDER BY seq) AS text FROM ${SCHEMA}.chunks WHERE run_id = $1`,
      [id],
    );
    const out = await fn(client, text.rows[0]?.text ?? '', row.rows[0]!.alive);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Appends one record to a run this process does not own (claim, cancel), under its row lock; its summary after. */
export async function appendLocked(
  client: pg.PoolClient,
  id: string,
  run: StoredRun,
  fields: { type: string; [field: string]: unknown },
): Promise<RunSummary> {
  const rec = { v: JOURNAL_VERSION, at: Date.now(), ...fields };
  const summary = foldRun(run.meta, [...run.records, rec]);
  await client.query(
    `INSERT INTO ${SCHEMA}.chunks (run_id, seq, text)
     SELECT $1, COALESCE(max(seq) + 1, 0), $2 FROM ${SCHEMA}.chunks WHERE run_id = $1`,
    [id, `${JSON.stringify(rec)}\n`],
  );
  await client.query(
    `UPDATE ${SCHEMA}.runs SET status = $2, owner = NULL, ended_at = $3, cancel_requested = false WHERE id = $1`,
    [id, summary.status, rec.at],
  );
  return summary;
}
