/**
 * The tasks extension on a v2 low-level Server: the capability, tasks/get, tasks/update and
 * tasks/cancel as custom methods, and maybeTask for the tools/call path. Every task is a durable
 * run of the journal, so state lives in the run store, never in one Server instance (HTTP builds
 * one per request) nor only in this process.
 */
import {
  type CallToolResult,
  type ElicitResult,
  ProtocolError,
  ProtocolErrorCode,
  specTypeSchemas,
} from '@modelcontextprotocol/server';
import { formatError, HatcheryError } from '../../core/errors.js';
import type { AskFn } from '../../engine/contracts.js';
import type { PendingQuestion } from '../../journal/store.js';
import { resumeRun } from '../background.js';
import type { CallEnv } from '../calls.js';
import { elicitAsk } from '../elicit.js';
import { callWithHandoff } from '../handoff.js';
import type { ServerHost } from '../host.js';
import { MAX_ERROR_BYTES } from '../outbound.js';
import type { RegistryEntry } from '../registry.js';
import { internalError } from '../results.js';
import type { BackgroundRun } from '../runs.js';
import { type CreateTaskResult, declaresTasks, TASK_SOURCE } from './schemas.js';
import { inputKey, readTaskRun, seedTask, taskNotFound } from './task-view.js';

export { readTask } from './task-view.js';

/** How long tasks/cancel waits for the run to stop before acknowledging, in ms. */
const CANCEL_WAIT_MS = 2_000;

/** Runs that a tasks/update is resuming now, per server: a second answer to the same question is ignored. */
const resuming = new WeakMap<ServerHost, Set<string>>();

/**
 * The tools/call path of a hatchery for a client that declares the extension: the call runs as a
 * task's run (source `task`) through callWithHandoff with the server's task wait; a run that ends
 * sooner answers with its normal result, one that goes on (or suspends at a question) answers with a
 * CreateTaskResult once its journal holds it. A run that suspends at a question in time becomes an
 * input_required task only for a client that takes forms (`forms`); any other gets the answerable
 * result at once (hatchery_respond), never a form it cannot show. Undefined when no task may be made
 * (the request does not declare the extension, or tasks are off): the caller runs the call the normal way.
 */
export async function maybeTask(
  core: ServerHost,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  env: CallEnv,
  { envelope, forms }: { envelope?: unknown; forms: boolean },
): Promise<CallToolResult | undefined> {
  if (!core.tasks || !declaresTasks(envelope)) return undefined;
  // Nobody is on the line once the call is a task: an ask suspends the run (tasks/update answers it)
  // instead of eliciting, and the model is the server's, not the client's.
  // The session's id for the run, so its hatchery_runs lists the task's run.
  const taskEnv: CallEnv = { signal: env.signal, trace: env.trace, progress: env.progress, runId: env.runId };
  const result = await callWithHandoff(core, entry, args, taskEnv, {
    waitMs: core.taskWaitMs,
    handoff: (run) => asTask(core, run),
    source: TASK_SOURCE,
    suspended: forms,
  });
  return result as CallToolResult;
}

/** The CreateTaskResult of a handed-off run, answered only once a tasks/get could find the task. */
async function asTask(core: ServerHost, run: BackgroundRun): Promise<CallToolResult> {
  await Promise.race([run.started, run.done]);
  // A run that failed before its journal existed (bad arguments, a cancelled wait for a slot) is no task.
  // (The store's read waits for this process's buffered appends.)
  if ((await core.runtime.store?.read(run.id)) === undefined) {
    await run.done;
    return run.result ?? internalError('the run ended without a result');
  }
  run.note = 'an MCP task: poll it with tasks/get';
  const task: CreateTaskResult = { ...seedTask(core, run), resultType: 'task' };
  // A CreateTaskResult stands in for the CallToolResult: the extension's polymorphic result.
  return task as unknown as CallToolResult;
}

/** tasks/cancel: the run is stopped where it runs; a finished task stays as it is (the ack is idempotent). */
export async function cancelTask(core: ServerHost, id: string): Promise<void> {
  const run = core.runs.get(id);
  if (run?.source === TASK_SOURCE && run.endedAt === undefined) {
    run.controller.abort(new HatcheryError('ABORTED', 'the task was cancelled with tasks/cancel'));
    await core.runs.wait(run, CANCEL_WAIT_MS);
    return;
  }
  const stored = await readTaskRun(core, id);
  const status = stored.summary.status;
  if (status === 'succeeded' || status === 'failed' || status === 'cancelled') return;
  // Running in another process (it gets the store's cancel marker), or suspended / interrupted:
  // nobody runs it, so the store ends it as cancelled at once.
  const summary = await core.runtime.store!.cancel(id);
  if (run && summary?.status === 'cancelled') run.state = 'cancelled';
}

/**
 * tasks/update: the answer to the ask a task waits on resumes its run (as hatchery_respond does);
 * responses to keys that are not outstanding are ignored, as the extension asks.
 */
export async function updateTask(
  core: ServerHost,
  id: string,
  responses: Record<string, unknown>,
): Promise<void> {
  const stored = await readTaskRun(core, id);
  const s = stored.summary;
  const live = core.runs.get(id);
  if (s.status !== 'input_required' || (live && live.endedAt === undefined)) return;
  const key = inputKey(s.attempts);
  if (!Object.hasOwn(responses, key)) return;
  const parsed = specTypeSchemas.ElicitResult['~standard'].validate(responses[key]);
  if (parsed.issues) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `inputResponses["${key}"] must be an elicitation result: {"action": "accept", "content": {"answer": "..."}} (or action "decline" / "cancel")`,
    );
  }
  const busy = resuming.get(core) ?? new Set<string>();
  resuming.set(core, busy);
  if (busy.has(id)) return;
  busy.add(id);
  try {
    const attempt = await core.runtime.prepareResume(id, { ask: answerOnce(s.question, parsed.value) });
    // The summary's source is TASK_SOURCE (readTaskRun checked it): the resumed run stays a task.
    const run = resumeRun(core, id, attempt, s);
    run.note = 'answered with tasks/update; the nodes that had finished were taken from the run journal';
  } catch (err) {
    // Answered meanwhile by another request or server: this response is for a key no longer outstanding.
    if (err instanceof HatcheryError && err.code === 'RESUME_REFUSED' && /running/.test(err.message)) return;
    if (err instanceof HatcheryError && err.code === 'NOT_FOUND') throw taskNotFound(core, id);
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `the answer could not be delivered: ${core.out.text(formatError(err), MAX_ERROR_BYTES)}`,
    );
  } finally {
    busy.delete(id);
  }
}

/**
 * The AskFn of a resumed task: the pending node's question gets the client's elicitation result
 * (through the same form as elicitation, so choices, schemas, decline and approvals behave alike);
 * any later question suspends the run again under a new input request key.
 */
function answerOnce(pending: PendingQuestion | undefined, reply: ElicitResult): AskFn {
  let used = false;
  const answer = elicitAsk(() => Promise.resolve(reply));
  return (q, signal) => {
    if (!used && (pending === undefined || q.node === pending.node)) {
      used = true;
      return answer(q, signal);
    }
    return Promise.reject(
      new HatcheryError('INPUT_REQUIRED', `node "${q.node}" waits for an answer: ${q.question}`, {
        node: q.node,
      }),
    );
  };
}
