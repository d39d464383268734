import {
  type Artifact,
  type Message,
  type Part,
  Role,
  type StreamResponse,
  type Task,
  TaskState,
  type TaskStatus,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { abortedError, sleep } from '../../core/cancel.js';
import { HatcheryError } from '../../core/errors.js';
import type { ToolResult } from '../../engine/contracts.js';

// One remote call: send a message, follow its task to the end, and say what came of it.

/** States after which the task changes no more, or not without the caller. */
const FINAL: ReadonlySet<number> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);
/** Polling of a task that is not streamed: first wait and longest wait between two GetTask calls. */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 2_000;
/** Time a CancelTask sent after the caller gave up may take. */
const CANCEL_TIMEOUT_MS = 5_000;

/** What one remote call needs: the client, who it is (for messages), and the message to send. */
export interface RemoteCall {
  client: Client;
  /** `A2A agent "echo"` or `A2A agent at <url>`, with the skill. */
  who: string;
  streaming: boolean;
  messageId: string;
  text: string;
  /** The skill asked for, sent in the message's metadata (`skill`); undefined for a card without skills. */
  skill: string | undefined;
  signal: AbortSignal;
}

/** What the task came to so far. */
interface Progress {
  taskId?: string;
  status?: TaskStatus;
  artifacts: Artifact[];
  history: Message[];
  /** A reply without a task (the agent answered at once). */
  reply?: Message;
}

/** A text part as the SDK's Part (the server's messages and artifacts use it too). */
export function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  };
}

/** The text of parts: text as is, data as JSON, files by name and where they are. */
export function partsText(parts: readonly Part[]): string {
  const out: string[] = [];
  for (const p of parts) {
    const c = p.content;
    if (!c) continue;
    if (c.$case === 'text') out.push(c.value);
    else if (c.$case === 'data') out.push(JSON.stringify(c.value ?? null));
    else if (c.$case === 'url') out.push(`[file ${p.filename || ''} ${p.mediaType || ''} at ${c.value}]`);
    else out.push(`[file ${p.filename || ''} ${p.mediaType || ''}, ${c.value.length} bytes]`);
  }
  return out.join('\n');
}

/** Folds one stream event into the progress. */
function fold(p: Progress, ev: StreamResponse): void {
  const e = ev.payload;
  if (!e) return;
  switch (e.$case) {
    case 'message':
      p.reply = e.value;
      return;
    case 'task':
      takeTask(p, e.value);
      return;
    case 'statusUpdate':
      p.taskId ??= e.value.taskId;
      if (e.value.status) p.status = e.value.status;
      return;
    case 'artifactUpdate': {
      const a = e.value.artifact;
      if (!a) return;
      const at = p.artifacts.findIndex((x) => x.artifactId === a.artifactId);
      const prev = at < 0 ? undefined : p.artifacts[at];
      if (prev === undefined) p.artifacts.push(a);
      else p.artifacts[at] = e.value.append ? { ...prev, parts: [...prev.parts, ...a.parts] } : a;
    }
  }
}

function takeTask(p: Progress, t: Task): void {
  p.taskId = t.id;
  if (t.status) p.status = t.status;
  if (t.artifacts.length > 0) p.artifacts = [...t.artifacts];
  if (t.history.length > 0) p.history = t.history;
}

const state = (p: Progress) => p.status?.state;
const done = (p: Progress) => p.reply !== undefined || FINAL.has(state(p) ?? 0);

/** The agent's own words about the task's state, or ''. */
function statusText(p: Progress): string {
  return p.status?.message ? partsText(p.status.message.parts).trim() : '';
}

/** The result of a finished call: the artifacts (or the agent's last words) or a tool error. */
function outcome(p: Progress, who: string): ToolResult {
  if (p.reply) return { text: partsText(p.reply.parts) };
  const said = statusText(p);
  const why = said ? `: ${said}` : ' (the agent gave no reason)';
  switch (state(p)) {
    case TaskState.TASK_STATE_COMPLETED: {
      const text = p.artifacts.map((a) => partsText(a.parts)).filter(Boolean);
      if (text.length > 0) return { text: text.join('\n\n') };
      if (said) return { text: said };
      const last = [...p.history].reverse().find((m) => m.role === Role.ROLE_AGENT);
      return { text: last ? partsText(last.parts) : '' };
    }
    case TaskState.TASK_STATE_FAILED:
      return { text: `${who}: the task failed${why}`, isError: true };
    case TaskState.TASK_STATE_REJECTED:
      return { text: `${who}: the agent rejected the task${why}`, isError: true };
    case TaskState.TASK_STATE_CANCELED:
      return { text: `${who}: the agent canceled the task${why}`, isError: true };
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return {
        text: `${who}: the agent needs more input (input-required)${why}. The remote task was cancelled; call again with a message that holds what it asks for`,
        isError: true,
      };
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return {
        text: `${who}: the agent needs authentication (auth-required)${why}. Give the agent's credentials in the "headers" of its a2aAgents entry`,
        isError: true,
      };
    default:
      return { text: `${who}: the task ended in an unknown state (${state(p)})`, isError: true };
  }
}

/** Asks for the task until it is final, waiting longer each time. */
async function poll(c: RemoteCall, p: Progress): Promise<void> {
  let wait = POLL_FIRST_MS;
  while (!done(p)) {
    await sleep(wait, c.signal);
    wait = Math.min(POLL_MAX_MS, wait * 1.5);
    takeTask(p, await c.client.getTask({ tenant: '', id: p.taskId! }, { signal: c.signal }));
  }
}

/** Tells the agent to stop a task this side gave up on; a failure only leaves it running. */
async function cancelRemote(c: RemoteCall, taskId: string): Promise<void> {
  try {
    await c.client.cancelTask(
      { tenant: '', id: taskId, metadata: undefined },
      { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) },
    );
  } catch {
    // The task may have ended meanwhile, or the agent be gone: nothing more to do.
  }
}

/**
 * Sends the message and follows its task to a final state: over the stream when the agent streams
 * (polling on if the stream ends early), by GetTask otherwise. When the caller gives up (cancel,
 * timeout, budget), the remote task is cancelled too; a task left waiting for input is cancelled.
 */
export async function callRemote(c: RemoteCall): Promise<ToolResult> {
  const message: Message = {
    messageId: c.messageId,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart(c.text)],
    metadata: c.skill === undefined ? undefined : { skill: c.skill },
    extensions: [],
    referenceTaskIds: [],
  };
  const p: Progress = { artifacts: [], history: [] };
  try {
    if (c.streaming) {
      const stream = c.client.sendMessageStream(
        { tenant: '', message, configuration: undefined, metadata: undefined },
        { signal: c.signal },
      );
      for await (const ev of stream) {
        fold(p, ev);
        if (done(p)) break;
      }
    } else {
      const configuration = {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: true,
      };
      const r = await c.client.sendMessage(
        { tenant: '', message, configuration, metadata: undefined },
        { signal: c.signal },
      );
      if ('messageId' in r) p.reply = r;
      else takeTask(p, r);
    }
    if (!done(p)) {
      if (p.taskId === undefined)
        throw new HatcheryError('TOOL', `${c.who}: the agent answered with no task and no message`);
      await poll(c, p);
    }
  } catch (err) {
    if (p.taskId !== undefined && !done(p)) await cancelRemote(c, p.taskId);
    if (c.signal.aborted) throw abortedError(c.signal) ?? err;
    if (err instanceof HatcheryError) throw err;
    throw new HatcheryError('TOOL', `${c.who}: ${(err as Error).message}`, {}, { cause: err });
  }
  const s = state(p);
  if (
    p.taskId !== undefined &&
    (s === TaskState.TASK_STATE_INPUT_REQUIRED || s === TaskState.TASK_STATE_AUTH_REQUIRED)
  )
    await cancelRemote(c, p.taskId);
  return outcome(p, c.who);
}
