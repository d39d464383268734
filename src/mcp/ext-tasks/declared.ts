import { declaresExtension } from '../envelope.js';
import { TASKS_EXTENSION } from './schemas.js';

/** True when the request's per-request client capabilities (2026-07-28 `_meta`) declare the extension. */
export function declaresTasks(envelope: unknown): boolean {
  return declaresExtension(envelope, TASKS_EXTENSION);
}
