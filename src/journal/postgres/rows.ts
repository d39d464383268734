/**
 * Changes to a run another process may be changing too (claims, cancels, resumes): made in one
 * transaction that holds the run's row lock, so of two replicas doing it at once one does it.
 */
import type pg from 'pg';
import { foldRun } from '../fold.js';
import { JOURNAL_VERSION, type RunSummary, type StoredRun } from '../store.js';
import { aliveSql } from './replicas.js';
import { inTransaction, SCHEMA } from './schema.js';

/** Who asks whether a run's owner is alive: this replica, its heartbeat timeout and the runs it runs. */
export interface Asker {
  replicaId: string;
  timeoutMs: number;
  /** The runs this process runs now. */
  ownIds: readonly string[];
}

/**
 * SQL true when the owner of run `r` is alive for the asker ($N: replica id, $N+1: timeout, $N+2: its
 * runs): a run it runs now, or one owned by another replica whose heartbeat is fresh. A run owned by
 * the asker's own replica id that it does not run was its previous process's, which died (a replica
 * takes its id's row only from a dead process).
 */
export const ownerAliveSql = (n: number): string =>
  `(r.id = ANY($${n + 2}::uuid[]) OR (r.owner IS DISTINCT FROM $${n} AND EXISTS (SELECT 1 FROM ${SCHEMA}.replicas p WHERE p.id = r.owner AND ${aliveSql(n + 1)})))`;

/** The parameters of ownerAliveSql, in order. */
export const askerParams = (a: Asker): unknown[] => [a.replicaId, a.timeoutMs, a.ownIds];

/**
 * Runs `fn` in a transaction holding run `id`'s row lock, with its journal text and whether its owner
 * is alive (see ownerAliveSql); undefined when there is no such run or another process holds the lock
 * (it is doing the same).
 */
export function lockedRun<T>(
  pool: pg.Pool,
  id: string,
  asker: Asker,
  fn: (client: pg.PoolClient, text: string, alive: boolean) => Promise<T | undefined>,
): Promise<T | undefined> {
  // A run another process holds the lock of is left out (SKIP LOCKED): that process is doing the same.
  return inTransaction(pool, async (client) => {
    const row = await client.query<{ alive: boolean }>(
      `SELECT ${ownerAliveSql(2)} AS alive FROM ${SCHEMA}.runs r WHERE r.id = $1 FOR UPDATE SKIP LOCKED`,
      [id, ...askerParams(asker)],
    );
    if (row.rows.length === 0) return undefined;
    const text = await client.query<{ text: string | null }>(
      `SELECT string_agg(text, '' ORDER BY seq) AS text FROM ${SCHEMA}.chunks WHERE run_id = $1`,
      [id],
    );
    return fn(client, text.rows[0]?.text ?? '', row.rows[0]!.alive);
  });
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

/** Whether a cancel was asked of run `id` that its owner has not seen (under the run's row lock). */
export async function cancelAsked(client: pg.PoolClient, id: string): Promise<boolean> {
  const res = await client.query<{ c: boolean }>(
    `SELECT cancel_requested AS c FROM ${SCHEMA}.runs WHERE id = $1`,
    [id],
  );
  return res.rows[0]?.c === true;
}
