/**
 * The AgentExecutor of the A2A server: a thin adapter over the server's background runs. A new task
 * is a run started under the task's id (runHatcheryCall, as a tool call runs); an answer resumes
 * the suspended run from its journal (resumeRun, as hatchery_respond does); cancelling aborts the
 * run's controller, or ends a suspended run in the journal. The run's events become status updates,
 * its outcome the output artifact and the final state.
 */
import { type Task, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { formatError, HatcheryError } from '../../core/errors.js';
import type { RunListener } from '../../engine/contracts.js';
import type { PendingQuestion } from '../../journal/store.js';
import { resumeRun } from '../background.js';
import { combine, runHatcheryCall } from '../calls.js';
import { follow } from '../handoff.js';
import type { ServerHost } from '../host.js';
import { MAX_ERROR_BYTES } from '../outbound.js';
import type { RegistryEntry } from '../registry.js';
import { structuredOf } from '../results.js';
import type { BackgroundRun } from '../runs.js';
import { outputArtifact, statusUpdate } from './parts.js';
import { A2A_SOURCE } from './source.js';
import { questionText } from './task-view.js';

/** What a request asks the executor to do, decided (and checked) before the SDK makes a task. */
export type TaskPlan =
  | { kind: 'start'; entry: RegistryEntry; args: Record<string, unknown> }
  | { kind: 'answer'; hatchery: string; file: string; answer: string; question?: PendingQuestion };

/** Key of the plan in the request's ServerCallContext state. */
export const PLAN_KEY = 'hatchery/plan';

/** A task's id and context id. */
type TaskIds = { taskId: string; contextId: string };

/** Publishes a status update of a task: its state, and what it says (redacted and capped at `cap` bytes). */
type Say = (state: TaskState, text?: string, cap?: number) => void;

/** Cap of a status message about a node, in bytes. */
const NODE_TEXT_BYTES = 1024;

/** Context ids remembered at most. */
const MAX_CONTEXTS = 10_000;

/** Seconds as status messages show them. */
function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The `{ error, code }` of a failed run's result (in the text block only for a tool with an output schema). */
function failure(result: BackgroundRun['result']): { error?: string; code?: string } {
  if (!result) return {};
  const s = structuredOf(result);
  if (s) return s as { error?: string; code?: string };
  const c = result.content?.[0];
  try {
    return c && c.type === 'text' ? (JSON.parse(c.text) as { error?: string; code?: string }) : {};
  } catch {
    return {};
  }
}

/** Runs hatcheries as A2A tasks; one per server, shared by every endpoint. */
export class HatcheryExecutor implements AgentExecutor {
  /** The runs this process drives now, by task id (= run id). */
  private readonly live = new Map<string, BackgroundRun>();
  /** Tasks whose execute has begun and not returned: the task store reads them from memory. */
  private readonly active = new Set<string>();
  /** The context of each task this process ran (bounded): a cancel's status update names it. */
  private readonly contexts = new Map<string, string>();

  constructor(private readonly core: ServerHost) {}

  /** Whether this process drives the task's run now (its saved task is then newer than the journal). */
  driving(taskId: string): boolean {
    return this.active.has(taskId);
  }

  /** Runs the plan the request wrapper decided: a new run, or the answer that resumes one. */
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const plan = ctx.context?.state.get(PLAN_KEY) as TaskPlan | undefined;
    if (!plan) throw new HatcheryError('INTERNAL', 'an A2A message reached the executor unchecked');
    const { taskId, contextId } = ctx;
    // A second answer racing the first one to the same task: the first drives it, on the same bus.
    if (this.active.has(taskId)) return;
    this.active.add(taskId);
    this.contexts.delete(taskId);
    this.contexts.set(taskId, contextId);
    if (this.contexts.size > MAX_CONTEXTS) this.contexts.delete(this.contexts.keys().next().value!);
    try {
      if (ctx.task) {
        bus.publish(AgentEvent.task(ctx.task));
      } else {
        const task: Task = {
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: {},
        };
        bus.publish(AgentEvent.task(task));
      }
      const say = this.sayer({ taskId, contextId }, bus);
      // The run's final output, whole, as its run_end event gives it (before any result shaping).
      const out: { output?: string } = {};
      const listener = this.listener(say, out);
      const run =
        plan.kind === 'start'
          ? this.start({ taskId, contextId }, plan, listener, say)
          : await this.answer(taskId, plan, listener, say);
      if (!run) return;
      this.live.set(taskId, run);
      await run.done;
      this.live.delete(taskId);
      this.finish(run, out.output, { taskId, contextId }, bus, say);
    } finally {
      this.live.delete(taskId);
      this.active.delete(taskId);
    }
  }

  /** Publishes a status update of the task, its text redacted and capped (at `cap` bytes) like everything sent. */
  private sayer({ taskId, contextId }: TaskIds, bus: ExecutionEventBus): Say {
    return (state, text, cap = MAX_ERROR_BYTES) =>
      bus.publish(
        AgentEvent.statusUpdate(
          statusUpdate(
            taskId,
            contextId,
            state,
            text === undefined ? undefined : this.core.out.text(text, cap),
          ),
        ),
      );
  }

  /** A status update per node start and end (nested runs' nodes as "sub > Node"); the output kept. */
  private listener(say: Say, out: { output?: string }): RunListener {
    const working = (text: string) => say(TaskState.TASK_STATE_WORKING, text, NODE_TEXT_BYTES);
    return (e) => {
      const label = (node: string) => (e.depth > 0 ? `${e.hatchery} > ${node}` : node);
      if (e.type === 'node_start') working(`step ${e.step}: node "${label(e.node)}" started`);
      else if (e.type === 'node_end') working(`step ${e.step}: node "${label(e.node)}" done (${secs(e.ms)})`);
      else if (e.type === 'run_end' && e.depth === 0 && e.ok) out.output = e.output;
    };
  }

  /** Starts the run of a new task, under the task's id (its context id kept in the journal), as a background run. */
  private start(
    { taskId, contextId }: TaskIds,
    plan: Extract<TaskPlan, { kind: 'start' }>,
    listener: RunListener,
    say: Say,
  ): BackgroundRun {
    const { entry, args } = plan;
    const h = entry.hatchery;
    const controller = new AbortController();
    const unfollow = follow(this.core.signal, controller);
    const run = this.core.runs.start(
      { hatchery: h.name, file: h.file, source: A2A_SOURCE },
      controller,
      (signal, onEvent, runId) =>
        runHatcheryCall(this.core, entry, args, {
          signal,
          onEvent: combine(onEvent, listener),
          runId,
          source: A2A_SOURCE,
          conversation: contextId,
          onQueued: () => say(TaskState.TASK_STATE_WORKING, `${h.name}: waiting for a run slot`),
        }),
      taskId,
    );
    run.done.then(unfollow, unfollow);
    say(TaskState.TASK_STATE_WORKING, `${h.name} started`);
    return run;
  }

  /**
   * Resumes a suspended run with the answer, from its journal. An answer the run refuses (not one
   * of the choices) leaves the task waiting for another: undefined then, the status says why.
   */
  private async answer(
    taskId: string,
    plan: Extract<TaskPlan, { kind: 'answer' }>,
    listener: RunListener,
    say: Say,
  ): Promise<BackgroundRun | undefined> {
    let attempt: Awaited<ReturnType<ServerHost['runtime']['prepareResume']>>;
    try {
      attempt = await this.core.runtime.prepareResume(taskId, { answer: plan.answer });
    } catch (err) {
      say(TaskState.TASK_STATE_INPUT_REQUIRED, `${formatError(err)}\n${questionText(plan.question)}`);
      return undefined;
    }
    const meta = { hatchery: plan.hatchery, file: plan.file, source: A2A_SOURCE };
    const run = resumeRun(this.core, taskId, attempt, meta, undefined, listener);
    run.note = 'answered by an A2A message; the nodes that had finished were taken from the run journal';
    say(TaskState.TASK_STATE_WORKING, `${plan.hatchery}: answered, going on`);
    return run;
  }

  /** The run's outcome as the task's end: the artifact then completed, or failed, canceled, input-required. */
  private finish(
    run: BackgroundRun,
    output: string | undefined,
    { taskId, contextId }: TaskIds,
    bus: ExecutionEventBus,
    say: Say,
  ): void {
    switch (run.state) {
      case 'succeeded': {
        const text = output ?? String(structuredOf(run.result!)?.output ?? '');
        const h = this.core.registry.get(run.hatchery)?.hatchery;
        const artifact = outputArtifact(h, this.core.out.text(text, this.core.out.maxResultBytes));
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact,
            append: false,
            lastChunk: true,
            metadata: {},
          }),
        );
        say(TaskState.TASK_STATE_COMPLETED);
        return;
      }
      case 'input_required':
        say(TaskState.TASK_STATE_INPUT_REQUIRED, questionText(run.question as PendingQuestion | undefined));
        return;
      case 'cancelled':
        say(TaskState.TASK_STATE_CANCELED, failure(run.result).error ?? 'the task was cancelled');
        return;
      default: {
        const f = failure(run.result);
        say(TaskState.TASK_STATE_FAILED, `${f.code ?? 'INTERNAL'}: ${f.error ?? 'the run failed'}`);
      }
    }
  }

  /**
   * CancelTask of a task whose bus is open: a run going here is aborted (its end publishes
   * canceled); a suspended one is ended as cancelled in the journal, and canceled published here.
   */
  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const run = this.live.get(taskId);
    if (run) {
      run.controller.abort(new HatcheryError('ABORTED', 'the task was cancelled with CancelTask'));
      return;
    }
    await this.core.runtime.store?.cancel(taskId);
    const say = this.sayer({ taskId, contextId: this.contexts.get(taskId) ?? taskId }, bus);
    say(TaskState.TASK_STATE_CANCELED, 'the task was cancelled with CancelTask');
  }
}
