/**
 * A task is a durable run: this maps a run, as this process holds it or as its journal tells it, to
 * the extension's Task. running -> working, input_required -> input_required (the ask as an
 * elicitation form) for a client that declares forms, else completed with the answerable result a
 * direct call returns (the question, the run id, hatchery_respond), succeeded and failed -> completed with the tool result a direct call returns
 * (the spec keeps `failed` for protocol errors), cancelled -> cancelled, interrupted -> failed (a
 * server stop is no tool result; resuming the run makes the task working again).
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { HatcheryError } from '../../core/errors.js';
import { isRunId } from '../../journal/run-files.js';
import type { JournalRecord, PendingQuestion, StoredRun } from '../../journal/store.js';
import type { Usage } from '../../providers/types.js';
import { quote } from '../../schema/suggest.js';
import { succeeded, waitingResult } from '../calls.js';
import { lastAt } from '../durable.js';
import { askForm, guardForm } from '../elicit.js';
import type { ServerHost } from '../host.js';
import { MAX_ERROR_BYTES } from '../outbound.js';
import { internalError, structuredOf } from '../results.js';
import { servesRun } from '../run-access.js';
import { askLine, interruptedText, progressText } from '../run-texts.js';
import type { BackgroundRun } from '../runs.js';
import { type DetailedTask, type InputRequest, TASK_SOURCE, type Task, type TaskStatus } from './schemas.js';

/** How often clients are asked to poll, in ms: runs take seconds to minutes, not milliseconds. */
export const POLL_INTERVAL_MS = 2_000;

/** Cap of a status message, in bytes. */
const STATUS_BYTES = 1024;

/** JSON-RPC internal error: what a failed task carries (the run could not finish; no tool result exists). */
const INTERNAL_ERROR = -32603;

/** The key of the input request a suspension asks: unique over the task's life (one per attempt). */
export function inputKey(attempts: number): string {
  return `ask-${attempts}`;
}

/** The -32602 error of an id that names no task of this server, saying what can be wrong. */
export function taskNotFound(core: ServerHost, id: string): ProtocolError {
  const where = core.runtime.store ? ` (run journal ${core.runtime.store.location})` : '';
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Failed to retrieve task: Task not found: no task ${core.out.text(quote(id), 300)} on this server${where}; use the taskId a tools/call returned (tasks of another server's run store, and runs started without a task, are not found here)`,
  );
}

/** A task's run from the journal; -32602 for an id that is not a UUID, is unknown, or is not a task. */
export async function readTaskRun(core: ServerHost, id: string): Promise<StoredRun> {
  // Checked before any lookup: a path like ../../etc/passwd never reaches the store.
  if (!isRunId(id)) throw taskNotFound(core, id);
  const stored = await core.runtime.store?.read(id);
  if (!stored || stored.meta.source !== TASK_SOURCE || !servesRun(core, stored.meta))
    throw taskNotFound(core, id);
  return stored;
}

/**
 * The task with this id: from this process's run when it holds a live or finished one, else from the
 * journal; `forms`: the request's client declared elicitation forms.
 */
export async function readTask(core: ServerHost, id: string, forms: boolean): Promise<DetailedTask> {
  if (!isRunId(id)) throw taskNotFound(core, id);
  const run = core.runs.get(id);
  if (run?.source === TASK_SOURCE && run.state !== 'input_required' && run.state !== 'interrupted') {
    return liveTask(core, run);
  }
  return storedTask(core, await readTaskRun(core, id), forms);
}

/** A task in `status`, its status message `text` (redacted and capped). */
function task(
  core: ServerHost,
  id: string,
  status: TaskStatus,
  text: string,
  times: { createdAt: number; updatedAt: number },
): DetailedTask {
  return {
    taskId: id,
    status,
    statusMessage: core.out.text(text, STATUS_BYTES),
    createdAt: new Date(times.createdAt).toISOString(),
    lastUpdatedAt: new Date(Math.max(times.createdAt, times.updatedAt)).toISOString(),
    ttlMs: core.runtime.store?.retentionMs ?? null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** The question a suspended run waits on, as a status message says it. */
function questionText(hatchery: string, q: PendingQuestion | undefined): string {
  return q ? askLine(q) : `${hatchery} waits for an answer`;
}

/** A task whose run this process holds (running, or ended with its result in memory). */
export function liveTask(core: ServerHost, run: BackgroundRun): DetailedTask {
  const times = { createdAt: run.startedAt, updatedAt: run.updatedAt };
  const make = (status: TaskStatus, text: string) => task(core, run.id, status, text, times);
  if (run.endedAt === undefined) {
    return make(
      'working',
      run.state === 'queued'
        ? `${run.hatchery}: waiting for a run slot`
        : progressText(run.hatchery, run.node, run.steps),
    );
  }
  const result = run.result ?? internalError('the run ended without a result');
  if (run.state === 'cancelled')
    return make('cancelled', firstText(result) || `${run.hatchery}: the run was cancelled`);
  const t = make(
    'completed',
    run.state === 'succeeded' ? `${run.hatchery} finished` : `${run.hatchery} failed: see the result`,
  );
  t.result = { ...result };
  return t;
}

/** The Task a tools/call answers with (CreateTaskResult): the state without its payload. */
export function seedTask(core: ServerHost, run: BackgroundRun): Task {
  if (run.endedAt !== undefined && run.state === 'input_required') {
    const text = questionText(run.hatchery, run.question as PendingQuestion | undefined);
    return task(core, run.id, 'input_required', text, { createdAt: run.startedAt, updatedAt: run.updatedAt });
  }
  const { inputRequests: _i, result: _r, error: _e, ...t } = liveTask(core, run);
  return t;
}

function firstText(result: CallToolResult): string {
  // Results are one JSON object (results.ts): its error says what happened.
  const error = structuredOf(result)?.error;
  if (typeof error === 'string') return error;
  const c = result.content?.[0];
  return c && c.type === 'text' ? c.text : '';
}

/** The last run_end record of the run's latest attempt (its output, value and usage). */
function lastEnd(records: readonly JournalRecord[]): JournalRecord | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.type === 'run_end') return r;
    if (r.type === 'resumed') return undefined;
  }
  return undefined;
}

/** The elicitation form of the question a suspended run waits on, guarded like every form sent. */
export function inputRequest(core: ServerHost, q: PendingQuestion): InputRequest {
  const { message, requestedSchema } = askForm(q);
  const params = guardForm(core.out, { mode: 'form', message, requestedSchema });
  return { method: 'elicitation/create', params: params as InputRequest['params'] };
}

/**
 * A task as its run's journal tells it, for a client that takes forms or not (`forms`). A run
 * waiting for an answer is shown to a client without forms as completed with the answerable result:
 * an elicitation form it cannot show would leave it polling forever (MCP Inspector's CLI did), while
 * the result says how to answer with hatchery_respond; the resumed run makes the task working
 * again under the same id.
 */
export function storedTask(core: ServerHost, stored: StoredRun, forms: boolean): DetailedTask {
  const s = stored.summary;
  // The run this process holds started at its own clock reading: the task's createdAt stays that.
  const createdAt = core.runs.get(s.id)?.startedAt ?? s.startedAt;
  const times = { createdAt, updatedAt: lastAt(stored.records) ?? createdAt };
  const make = (status: TaskStatus, text: string) => task(core, s.id, status, text, times);
  const structured = () => core.registry.get(s.hatchery)?.tool.outputSchema !== undefined;
  switch (s.status) {
    case 'running':
      return make('working', progressText(s.hatchery, s.node, s.steps));
    case 'input_required': {
      const q = s.question;
      if (!forms) {
        const t = make(
          'completed',
          `${questionText(s.hatchery, q)}; answer with hatchery_respond {"run_id": "${s.id}", "answer": "..."}`,
        );
        const waiting = new HatcheryError('INPUT_REQUIRED', `${s.hatchery} waits for an answer`, {
          ...(q ? { node: q.node, question: q } : {}),
          runId: s.id,
        });
        t.result = { ...waitingResult(core, waiting, structured()) };
        return t;
      }
      const t = make('input_required', questionText(s.hatchery, q));
      t.inputRequests = q ? { [inputKey(s.attempts)]: inputRequest(core, q) } : {};
      return t;
    }
    case 'succeeded': {
      const t = make('completed', `${s.hatchery} finished`);
      const end = lastEnd(stored.records);
      const usage = (end?.usage as Usage | undefined) ?? s.usage;
      // The whole run's tokens and cost, and each attempt's, as the call itself reports them.
      const attempts = s.attemptUsage ? { total: s.usage, each: s.attemptUsage } : undefined;
      const result = succeeded(
        core,
        { runId: s.id, output: s.output ?? '', value: end?.value, usage, steps: s.steps, outputs: {} },
        structured(),
        attempts,
      ).result;
      t.result = { ...result };
      return t;
    }
    case 'failed': {
      const t = make('completed', `${s.hatchery} failed: see the result`);
      t.result = { ...internalError(core.out.text(s.error ?? 'the run failed', MAX_ERROR_BYTES)) };
      return t;
    }
    case 'cancelled':
      return make('cancelled', s.error ?? `${s.hatchery}: the run was cancelled`);
    case 'interrupted': {
      const why = interruptedText(core, s);
      const t = make('failed', why);
      t.error = { code: INTERNAL_ERROR, message: t.statusMessage!, data: { runStatus: 'interrupted' } };
      return t;
    }
  }
}
