/**
 * A task is a durable run: this maps a run, as its journal tells it, to an A2A Task. running ->
 * working, input_required -> input-required (the question as the status message), succeeded ->
 * completed with the output artifact, failed -> failed with the error, cancelled -> canceled,
 * interrupted -> failed (a server stop; resuming the run makes the task working again).
 */
import { type Task, TaskState } from '@a2a-js/sdk';
import type { PendingQuestion, RunStatus, StoredRun } from '../../journal/store.js';
import type { ServerHost } from '../host.js';
import { MAX_ERROR_BYTES } from '../outbound.js';
import { askLine, interruptedText, progressText } from '../run-texts.js';
import { agentMessage, outputArtifact } from './parts.js';

/** The A2A state of a run in `status`. */
export function taskState(status: RunStatus): TaskState {
  switch (status) {
    case 'running':
      return TaskState.TASK_STATE_WORKING;
    case 'input_required':
      return TaskState.TASK_STATE_INPUT_REQUIRED;
    case 'succeeded':
      return TaskState.TASK_STATE_COMPLETED;
    case 'cancelled':
      return TaskState.TASK_STATE_CANCELED;
    case 'failed':
    case 'interrupted':
      return TaskState.TASK_STATE_FAILED;
  }
}

/** True for the states a task never leaves. */
export function isFinal(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED
  );
}

/** The question a suspended run waits on, as a status message says it (choices included). */
export function questionText(q: PendingQuestion | undefined): string {
  if (!q) return 'the run waits for an answer: send it as the next message of this task';
  const lines = [askLine(q)];
  if (q.choices) lines.push(`choices: ${q.choices.join(', ')}`);
  if (q.schema) lines.push(`the answer is JSON matching: ${JSON.stringify(q.schema)}`);
  if (q.kind === 'approve') lines.push('answer "yes" to approve');
  return lines.join('\n');
}

/** What a status message says of a run in the journal, or undefined when nothing needs saying. */
function statusText(core: ServerHost, stored: StoredRun): string | undefined {
  const s = stored.summary;
  switch (s.status) {
    case 'running':
      return progressText(s.hatchery, s.node, s.steps);
    case 'input_required':
      return questionText(s.question);
    case 'succeeded':
      return undefined;
    case 'failed':
      return `${s.code ?? 'INTERNAL'}: ${s.error ?? 'the run failed'}`;
    case 'cancelled':
      return s.error ?? `${s.hatchery}: the run was cancelled`;
    case 'interrupted':
      return interruptedText(core, s);
  }
}

/**
 * The Task of a run read from its journal. `known` is the task as this process last saved it (its
 * history), kept when the journal agrees with its state; else its status and artifacts are the
 * journal's, and its context id the one its run was started with.
 */
export function storedTask(core: ServerHost, stored: StoredRun, known: Task | undefined): Task {
  const s = stored.summary;
  // A run journaled before context ids were kept has its own id as context id.
  const contextId = known?.contextId || stored.meta.conversation || s.id;
  const state = taskState(s.status);
  if (known && known.status?.state === state) return known;
  const text = statusText(core, stored);
  const artifacts =
    s.status === 'succeeded'
      ? [
          outputArtifact(
            core.registry.get(s.hatchery)?.hatchery,
            core.out.text(s.output ?? '', core.out.maxResultBytes),
          ),
        ]
      : (known?.artifacts ?? []);
  const at = stored.records.length > 0 ? stored.records[stored.records.length - 1]!.at : s.startedAt;
  return {
    id: s.id,
    contextId,
    status: {
      state,
      message:
        text === undefined ? undefined : agentMessage(s.id, contextId, core.out.text(text, MAX_ERROR_BYTES)),
      timestamp: new Date(at).toISOString(),
    },
    artifacts,
    history: known?.history ?? [],
    metadata: known?.metadata ?? {},
  };
}
