/**
 * The outcomes of the steps made inside a step (a branch's model and tool calls, a nested run's), kept
 * until the run ends: DBOS checkpoints a step only when it ends, so a branch a crash cut short would
 * otherwise pay every call it had made again (runtime/durable/steps.ts).
 */
import type pg from 'pg';
import { SCHEMA } from './schema.js';

/** A step's outcome as kept: the step's name, and its stored outcome as JSON. */
export interface KeptStep {
  name: string;
  outcome: string;
}

/** The kept steps of attempt `attempt` of run `runId`, by key. */
export async function keptSteps(
  pool: pg.Pool,
  runId: string,
  attempt: number,
): Promise<Map<string, KeptStep>> {
  const res = await pool.query<{ key: string; name: string; outcome: string }>(
    `SELECT key, name, outcome FROM ${SCHEMA}.step_memos WHERE run_id = $1 AND attempt = $2`,
    [runId, attempt],
  );
  return new Map(res.rows.map((r) => [r.key, { name: r.name, outcome: r.outcome }]));
}

/** Keeps a step's outcome under `key` (a step made again after a crash replaces what was kept). */
export async function keepStep(
  pool: pg.Pool,
  runId: string,
  attempt: number,
  key: string,
  step: KeptStep,
): Promise<void> {
  await pool.query(
    `INSERT INTO ${SCHEMA}.step_memos (run_id, attempt, key, name, outcome) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (run_id, attempt, key) DO UPDATE SET name = EXCLUDED.name, outcome = EXCLUDED.outcome`,
    [runId, attempt, key, step.name, step.outcome],
  );
}
