import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { Task } from '@modelcontextprotocol/sdk/types.js';

/** Longest time a finished task's result is kept, whatever the client asks for. */
export const MAX_TASK_TTL_MS = 24 * 3_600_000;

/**
 * The SDK's in-memory task store, plus cancellation: when a client cancels a task (`tasks/cancel`),
 * the run behind it is aborted too, not only marked cancelled.
 */
export class CancellableTaskStore extends InMemoryTaskStore {
  private readonly controllers = new Map<string, AbortController>();

  /** Ties a task to the controller of its run; forgotten once the task ends. */
  bind(taskId: string, controller: AbortController): void {
    this.controllers.set(taskId, controller);
  }

  /** Forgets a task's controller (its run ended). */
  unbind(taskId: string): void {
    this.controllers.delete(taskId);
  }

  override async updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled') {
      this.controllers.get(taskId)?.abort(new Error('the task was cancelled by the client'));
      this.controllers.delete(taskId);
    }
  }

  /** Stops the cleanup timers (server shutdown). */
  dispose(): void {
    this.controllers.clear();
    this.cleanup();
  }
}
