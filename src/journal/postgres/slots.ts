/**
 * Whether a run slot of the engine's queues (runtime/durable/slots.ts) is still in use: a slot is
 * taken for a run before the run starts, by a replica that may die before or while running it.
 */
import type pg from 'pg';
import { aliveSql } from './replicas.js';
import { SCHEMA } from './schema.js';

/** A slot taken for run `runId` by replica `holder`. */
export interface SlotTaken {
  runId: string;
  holder: string;
}

/**
 * Which of `slots` are in use: the run is running (in any replica: a run whose replica died is
 * claimed and goes on elsewhere, in the same slot), or it has not started yet and its holder is
 * alive. A finished, suspended or interrupted run's slot, and a dead holder's unstarted one, are free.
 */
export async function slotsInUse(
  pool: pg.Pool,
  slots: readonly SlotTaken[],
  heartbeatTimeoutMs: number,
): Promise<boolean[]> {
  if (slots.length === 0) return [];
  const res = await pool.query<{ used: boolean }>(
    `SELECT COALESCE(
        (SELECT r.status = 'running' FROM ${SCHEMA}.runs r WHERE r.id = s.run_id),
        EXISTS (SELECT 1 FROM ${SCHEMA}.replicas p WHERE p.id = s.holder AND ${aliveSql(3)})
      ) AS used
     FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS s(run_id, holder, n)
     ORDER BY s.n`,
    [slots.map((s) => s.runId), slots.map((s) => s.holder), heartbeatTimeoutMs],
  );
  return res.rows.map((r) => r.used);
}
