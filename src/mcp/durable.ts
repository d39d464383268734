import type { CallToolResult } from '@modelcontextprotocol/server';
import { sleep } from '../core/cancel.js';
import { HatcheryError } from '../core/errors.js';
import type { JournalRecord, RunFilter, RunSummary, StoredRun } from '../journal/store.js';
import { quote } from '../schema/suggest.js';
import type { ServerHost } from './host.js';
import { jsonResult, outputValue } from './results.js';
import { servesRun } from './run-access.js';
import { type BackgroundRun, NEXT_STEP, seconds, statusOutput, usageFields, usageJson } from './runs.js';

/** A run of the journal as hatchery_runs lists it. */
export function summaryView(s: RunSummary): Record<string, unknown> {
  return {
    run_id: s.id,
    hatchery: s.hatchery,
    state: s.status,
    source: s.source,
    started_at: new Date(s.startedAt).toISOString(),
    ...(s.endedAt !== undefined ? { seconds: seconds(s.startedAt, s.endedAt) } : {}),
    steps: s.steps,
    ...usageFields(s.usage),
    ...(s.node ? { node: s.node } : {}),
    ...(s.attempts > 1 ? { attempts: s.attempts } : {}),
  };
}

/** A run read from the journal in the shape hatchery_status gives live runs, plus what to do next. */
export function storedStatus(run: StoredRun): Record<string, unknown> {
  const s = run.summary;
  const outputs: Record<string, string> = {};
  for (const r of run.records) {
    if (r.type === 'node_end' && r.depth === 0 && typeof r.node === 'string' && typeof r.output === 'string')
      outputs[r.node] = statusOutput(r.output);
  }
  const view: Record<string, unknown> = {
    run_id: s.id,
    hatchery: s.hatchery,
    state: s.status,
    ...(s.node ? { [s.status === 'running' ? 'current_node' : 'node']: s.node } : {}),
    steps: s.steps,
    seconds: seconds(s.startedAt, s.endedAt ?? lastAt(run.records) ?? s.startedAt),
    ...usageFields(s.usage),
    outputs,
  };
  if (s.error) view.error = s.error;
  if (s.question) view.question = s.question;
  const next = NEXT_STEP[s.status];
  if (next) view.next_step = next;
  else if (s.status === 'running') view.note = 'the run belongs to another server process; it is still going';
  return view;
}

/** When the run's journal was last written to, if it has any record. */
export function lastAt(records: readonly JournalRecord[]): number | undefined {
  return records.length > 0 ? records[records.length - 1]!.at : undefined;
}

/** The result hatchery_result gives for a run that only the journal knows (finished, suspended, elsewhere). */
export function storedResult(core: ServerHost, run: StoredRun): CallToolResult {
  const s = run.summary;
  if (s.status === 'succeeded' && s.output !== undefined) {
    const value = outputValue(s.output, s.id, usageFields(s.usage));
    if (s.attemptUsage && value.usage) value.usage_by_attempt = s.attemptUsage.map(usageJson);
    return core.out.result(jsonResult(value));
  }
  if (s.status === 'failed' || s.status === 'cancelled') {
    const code = s.code ?? (s.status === 'cancelled' ? 'ABORTED' : 'INTERNAL');
    return core.out.result(
      jsonResult({ error: s.error ?? `the run ${s.status}`, code, run_id: s.id }, { isError: true }),
    );
  }
  const view = storedStatus(run);
  if (s.status === 'running') view.next_step = 'call hatchery_result again to keep waiting';
  return json(view);
}

/**
 * A generic tool's answer: `value` as structured content and as its text (results.ts), with
 * `next_step` (what the caller does next) unless the value has one already.
 */
export function json(value: Record<string, unknown>, nextStep?: string): CallToolResult {
  return jsonResult(
    nextStep === undefined || 'next_step' in value ? value : { ...value, next_step: nextStep },
  );
}

/**
 * The journal's record of a run of a served file, or a NOT_FOUND error that says where runs are
 * kept; a run of another file (a CLI run sharing the state folder) gets the same error.
 */
export async function readStored(core: ServerHost, id: string): Promise<StoredRun> {
  const stored = await core.runtime.store?.read(id);
  if (!stored || !servesRun(core, stored.meta)) {
    const where = core.runtime.store
      ? `neither this server nor its run journal (${core.runtime.store.location}) has a run of a file it serves with this id`
      : 'no run of this server has it (the server runs without a journal: --no-journal)';
    throw new HatcheryError(
      'NOT_FOUND',
      `unknown run id ${quote(id)}: ${where}; use the run_id that hatchery_start or hatchery_runs gave`,
    );
  }
  return stored;
}

/** How often a run another process runs is read again while hatchery_result waits for it, in ms. */
const STORED_POLL_MS = 250;

/**
 * The journal's record of a run, read again until it is no longer running or `ms` have passed: a run
 * of another server process (a replica on the same state folder) ends only in the journal, so
 * hatchery_result through any replica waits as long as through the one that runs it.
 */
export async function waitStored(
  core: ServerHost,
  id: string,
  ms: number,
  signal: AbortSignal,
): Promise<StoredRun> {
  const until = Date.now() + ms;
  let run = await readStored(core, id);
  while (run.summary.status === 'running' && !signal.aborted) {
    const left = until - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(STORED_POLL_MS, left), signal);
    run = await readStored(core, id);
  }
  return run;
}

/**
 * hatchery_runs: the runs of the journal (newest first), or of this server's memory without one;
 * only runs of served files, and only those in `mine` (the session's) unless the server lists all.
 */
export async function listRuns(
  core: ServerHost,
  filter: Pick<RunFilter, 'status' | 'hatchery' | 'limit'>,
  mine: ReadonlySet<string>,
): Promise<CallToolResult> {
  const visible = (r: { id: string; hatchery: string; file: string }) =>
    (core.listAllRuns || mine.has(r.id)) && servesRun(core, r);
  const max = filter.limit ?? 50;
  const store = core.runtime.store;
  if (store) {
    // The limit applies to what this session may see: the store lists every match, filtered here.
    let skipped = 0;
    const all = await store.list({
      ...filter,
      limit: Number.POSITIVE_INFINITY,
      skipped: () => {
        skipped++;
      },
    });
    const runs = all.filter(visible).slice(0, max).map(summaryView);
    // Unreadable journal files are left out, counted so that a missing run has an explanation.
    return json(skipped > 0 ? { runs, journal: store.location, skipped } : { runs, journal: store.location });
  }
  const live = core.runs
    .all()
    .filter(
      (r) =>
        (!filter.status || r.state === filter.status) &&
        (!filter.hatchery || r.hatchery === filter.hatchery) &&
        visible(r),
    )
    .slice(0, max)
    .map((r: BackgroundRun) => core.runs.status(r));
  return json({ runs: live, journal: null });
}
