/**
 * The wire shapes of the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), written
 * from its specification: the SDK has no released support, so tasks/get, tasks/update and
 * tasks/cancel are custom methods whose params the SDK checks with these schemas.
 */
import { z } from 'zod';
import { declaresExtension } from '../envelope.js';

/** The extension's identifier, in capabilities and in the per-request client capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The journal `source` of runs started as tasks: only those runs are tasks. */
export const TASK_SOURCE = 'task';

/** True when the request's per-request client capabilities (2026-07-28 `_meta`) declare the extension. */
export function declaresTasks(envelope: unknown): boolean {
  return declaresExtension(envelope, TASKS_EXTENSION);
}

/** Longest task id accepted; ids are UUIDs, anything longer is refused before any lookup. */
const MAX_TASK_ID = 200;

const taskId = z.string().max(MAX_TASK_ID);

/** Params of tasks/get and tasks/cancel. */
export const TaskIdParams = z.object({ taskId });

/**
 * Params of tasks/update. The SDK lifts `inputResponses` out of the params before they are checked
 * (into ctx.mcpReq.inputResponses, as for any multi round-trip retry), so it is optional here.
 */
export const UpdateTaskParams = z.object({
  taskId,
  inputResponses: z.record(z.string(), z.unknown()).optional(),
});

/** Results are built here, not parsed: any object passes (the SDK adds `resultType: "complete"`). */
export const TaskResult = z.looseObject({});

/** A task's status on the wire. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The Task shape of the specification. */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** Time to live from creation, in ms; null for unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** A server-to-client request a task waits on (here: elicitation forms of ask nodes). */
export interface InputRequest {
  method: 'elicitation/create';
  params: { mode: 'form'; message: string; requestedSchema: Record<string, unknown> };
}

/** A JSON-RPC error object, as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** A task with the payload of its status: inputRequests, the result, or the error. */
export interface DetailedTask extends Task {
  inputRequests?: Record<string, InputRequest>;
  result?: Record<string, unknown>;
  error?: TaskError;
}

/** What a tools/call answers instead of its result when the run goes on as a task. */
export type CreateTaskResult = Task & { resultType: 'task'; [key: string]: unknown };
