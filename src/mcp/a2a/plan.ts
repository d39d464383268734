/**
 * What an incoming message asks, decided before the SDK makes a task of it: which hatchery runs
 * (the endpoint's, or the skill the message names) with which inputs, or which suspended run the
 * message answers. Anything wrong is an A2A error of the request (invalid params, task not found,
 * unsupported operation) naming what would be right; no task, no run.
 */
import { TaskState } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { formatError, HatcheryError } from '../../core/errors.js';
import { isRunId } from '../../journal/run-files.js';
import { listNames, quote } from '../../schema/suggest.js';
import type { ServerHost } from '../host.js';
import { MAX_ERROR_BYTES } from '../outbound.js';
import type { RegistryEntry } from '../registry.js';
import { unknownName } from '../tool-defs.js';
import { A2A_PATH } from './card.js';
import { PLAN_KEY, type TaskPlan } from './executor.js';
import { messageAnswer, messageArgs } from './parts.js';
import type { JournalTaskStore } from './task-store.js';
import { isFinal } from './task-view.js';

/** What planning needs: the server, its task store, whether a task runs here, and the endpoint's hatchery. */
export interface PlanHost {
  core: ServerHost;
  tasks: JournalTaskStore;
  executor: { driving(id: string): boolean };
  /** The hatchery of a /a2a/<name> endpoint; undefined at the folder's. */
  scope: string | undefined;
}

/** Metadata key of a message that names the skill (hatchery) to run at the folder's endpoint. */
export const SKILL_KEY = 'skill';

/** An invalid-params error whose text is redacted and capped like everything sent. */
function invalid(core: ServerHost, text: string): Error {
  return new RequestMalformedError(core.out.text(text, MAX_ERROR_BYTES));
}

/** The served hatchery of the endpoint, or of the skill the message names. */
function pick(host: PlanHost, metadata: Record<string, unknown> | undefined): RegistryEntry {
  const { core, scope } = host;
  const names = core.registry.listed().map((e) => e.name);
  const named = metadata?.[SKILL_KEY];
  if (scope !== undefined && named !== undefined && named !== scope) {
    throw invalid(
      core,
      `this endpoint runs ${quote(scope)}, but the message names the skill ${quote(String(named))}`,
    );
  }
  let name = scope ?? (typeof named === 'string' ? named : undefined);
  if (name === undefined) {
    if (names.length !== 1) {
      const which =
        names.length === 0 ? 'no hatcheries are served now' : `the skills are: ${listNames(names, 20)}`;
      throw invalid(
        core,
        `name the skill to run: put {"${SKILL_KEY}": "<id>"} in the message's metadata, or send it to ${A2A_PATH}/<id>; ${which}`,
      );
    }
    name = names[0]!;
  }
  const entry = core.registry.get(name);
  if (!entry) {
    const failed = core.registry.failure(name);
    throw invalid(
      core,
      failed ? failed.message : `${unknownName('hatchery', name, names)} (skills: ${listNames(names, 20)})`,
    );
  }
  return entry;
}

/** The plan of a message that answers the question of task `id` (its run suspended at an ask node). */
async function answerPlan(
  host: PlanHost,
  id: string,
  message: NonNullable<Parameters<A2ARequestHandler['sendMessage']>[0]['message']>,
): Promise<TaskPlan> {
  const { core, tasks, executor, scope } = host;
  const task = isRunId(id) ? await tasks.load(id) : undefined;
  if (!task)
    throw new TaskNotFoundError(core.out.text(`Task not found: ${quote(id)} is no task of this server`, 300));
  const state = task.status?.state;
  if (executor.driving(id) || state === TaskState.TASK_STATE_WORKING) {
    throw new UnsupportedOperationError(
      `task ${id} is still working: wait for its next status (SubscribeToTask, GetTask) or cancel it`,
    );
  }
  if (isFinal(state)) throw new UnsupportedOperationError(`task ${id} has ended; start a new task instead`);
  const store = core.runtime.store;
  if (!store) {
    throw new UnsupportedOperationError(
      `task ${id} waits for an answer, but answering resumes the run from its journal and this server keeps none (--no-journal); cancel the task and start another`,
    );
  }
  const stored = await store.read(id);
  if (!stored) throw new TaskNotFoundError(`Task not found: ${id}`);
  if (scope !== undefined && stored.meta.hatchery !== scope) {
    throw invalid(
      core,
      `task ${id} is a task of ${quote(stored.meta.hatchery)}: send its messages to ${A2A_PATH}`,
    );
  }
  return {
    kind: 'answer',
    hatchery: stored.meta.hatchery,
    file: stored.meta.file,
    answer: messageAnswer(message),
    ...(stored.summary.question ? { question: stored.summary.question } : {}),
  };
}

/** Checks a SendMessage (or SendMessageStream) and puts its plan in the call's context for the executor. */
export async function planned(
  host: PlanHost,
  params: Parameters<A2ARequestHandler['sendMessage']>[0],
  ctx: ServerCallContext,
): Promise<void> {
  const { core } = host;
  const message = params.message;
  if (!message) throw invalid(core, 'the request has no message');
  // Files listed before their compile (a fast start) are compiled, and the journal opened, first.
  await core.ready();
  try {
    const plan: TaskPlan = message.taskId
      ? await answerPlan(host, message.taskId, message)
      : (() => {
          const entry = pick(host, message.metadata);
          return { kind: 'start', entry, args: messageArgs(entry.hatchery, message) };
        })();
    ctx.state.set(PLAN_KEY, plan);
  } catch (err) {
    if (err instanceof HatcheryError) throw invalid(core, formatError(err));
    throw err;
  }
}
