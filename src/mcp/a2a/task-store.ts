/**
 * The SDK's TaskStore backed by the run journal. The SDK saves a task at every event it handles and
 * loads it again before the next, so the tasks of this process are kept in memory (bounded) while
 * their runs go; the journal is the truth for everything else: a task whose run this process no
 * longer drives (suspended, ended, run by another replica, or from before a restart) is read from
 * the journal, so its status survives a restart and follows what other paths (hatchery_cancel,
 * hatchery_respond, a replica) did to its run.
 */
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { TaskStore } from '@a2a-js/sdk/server';
import { isRunId } from '../../journal/run-files.js';
import type { ServerHost } from '../host.js';
import { servesRun } from '../run-access.js';
import { A2A_SOURCE } from './source.js';
import { storedTask } from './task-view.js';

/**
 * Tasks kept whole in memory at most (an output artifact may be as large as --max-result-bytes);
 * older ones are read from the journal again when asked for.
 */
const MAX_KEPT_TASKS = 100;

/** The journal-backed task store of one server; `driving(id)` says whether this process runs that task now. */
export class JournalTaskStore implements TaskStore {
  private readonly kept = new Map<string, Task>();

  constructor(
    private readonly core: ServerHost,
    private readonly driving: (id: string) => boolean,
  ) {}

  /** Keeps the task as the SDK built it (newest last, so the oldest go first). */
  async save(task: Task): Promise<void> {
    this.kept.delete(task.id);
    this.kept.set(task.id, structuredClone(task));
    if (this.kept.size > MAX_KEPT_TASKS) this.kept.delete(this.kept.keys().next().value!);
  }

  /**
   * The task with this id: as saved while this process drives its run, else from the journal; an id
   * that is no UUID, no run of a served file, or a run not started as an A2A task is no task.
   */
  async load(taskId: string): Promise<Task | undefined> {
    // Checked before any lookup: a path like ../../etc/passwd never reaches the store.
    if (!isRunId(taskId)) return undefined;
    // A fast start opens the journal after its first answer: a GetTask may come first.
    await this.core.ready();
    const known = this.kept.get(taskId);
    const store = this.core.runtime.store;
    if (!store || this.driving(taskId)) return known && structuredClone(known);
    const stored = await store.read(taskId);
    if (!stored || stored.meta.source !== A2A_SOURCE || !servesRun(this.core, stored.meta)) {
      // Not journaled yet: a task the SDK saved before its run wrote its first record.
      return known && structuredClone(known);
    }
    return structuredClone(storedTask(this.core, stored, known));
  }

  /**
   * ListTasks would hand every task id, the capability to read, answer and cancel a task, to every
   * caller: like hatchery_runs it is refused unless the server lists every run (--list-all-runs).
   */
  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    await this.core.ready();
    const store = this.core.runtime.store;
    if (!this.core.listAllRuns || !store) {
      throw new UnsupportedOperationError(
        'ListTasks is off: a task id is the capability to read, answer and cancel a task, so tasks are listed only by a server started with --list-all-runs (and a run journal)',
      );
    }
    const runs = await store.list({ limit: params.pageSize ?? 50 });
    const tasks: Task[] = [];
    for (const r of runs) {
      if (r.source !== A2A_SOURCE || !servesRun(this.core, r)) continue;
      const t = await this.load(r.id);
      if (t && (!params.contextId || t.contextId === params.contextId)) tasks.push(t);
    }
    return { tasks, nextPageToken: '', pageSize: tasks.length, totalSize: tasks.length };
  }
}
