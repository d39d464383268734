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

/** Whether a slot is in use (see slotsInUse). */
export type SlotUse = 'used' | 'free' | 'interrupted';

/**
 * Which of `slots` are in use: `used` while the run is running (in any replica: a run whose replica
 * died is claimed and goes on elsewhere, in the same slot), or before it started while its holder is
 * alive; `interrupted` for a run its replica left (in use while it is being run again); `free` for a
 * finished, suspended or cancelled run's slot, and a dead holder's unstarted one.
 */
export async function slotsInUse(
  pool: pg.Pool,
  slots: readonly SlotTaken[],
  heartbeatTimeoutMs: number,
): Promise<SlotUse[]> {
  if (slots.length === 0) return [];
  const res = await pool.query<{ status: string | null; alive: boolean }>(
    `SELECT (SELECT r.status FROM ${SCHEMA}.runs r WHERE r.id = s.run_id) AS status,
        EXISTS (SELECT 1 FROM ${SCHEMA}.replicas p WHERE p.id = s.holder AND ${aliveSql(3)}) AS alive
     FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS s(run_id, holder, n)
     ORDER BY s.n`,
    [slots.map((s) => s.runId), slots.map((s) => s.holder), heartbeatTimeoutMs],
  );
  return res.rows.map(({ status, alive }) =>
    status === 'running' || (status === null && alive) ? 'used' : status === 'interrupted' ? status : 'free',
  );
}
