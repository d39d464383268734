// Kept free of zod: a session registers the extension before its first answer (see register.ts).
import { declaresExtension } from '../envelope.js';

/** The extension's identifier, in capabilities and in the per-request client capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The journal `source` of runs started as tasks: only those runs are tasks. */
export const TASK_SOURCE = 'task';

/** True when the request's per-request client capabilities (2026-07-28 `_meta`) declare the extension. */
export function declaresTasks(envelope: unknown): boolean {
  return declaresExtension(envelope, TASKS_EXTENSION);
}
