/**
 * Run slots shared by every replica: `--max-concurrent` and a hatchery's `max_concurrent` on the
 * engine. Each limit is a DBOS queue whose `globalConcurrency` is the limit. A run takes a slot by
 * enqueueing a small workflow, `hatchery.slot`, that the queue starts (on whichever replica polls it)
 * once fewer than the limit are running; it says so with an event, then waits, counted by the queue,
 * for the release the caller sends when its run ends. The run itself stays on the replica its
 * caller reached, with the caller's MCP session (progress, sampling, elicitation). A slot whose holder
 * died, or whose release was lost, is freed by the sweep of live replicas.
 */
import { randomBytes } from 'node:crypto';
import { HatcheryError } from '../../core/errors.js';
import { slotsInUse } from '../../journal/postgres/slots.js';
import type { PostgresRunStore } from '../../journal/postgres/store.js';
import type { SlotLimit } from '../options.js';

type Dbos = typeof import('@dbos-inc/dbos-sdk').DBOS;

/** The DBOS workflow name of a run (dbos.ts). */
export const RUN_WORKFLOW = 'hatchery.run';
/** The DBOS workflow name of a slot. */
export const SLOT_WORKFLOW = 'hatchery.slot';
/** How often a replica polls a slot queue, in ms (DBOS's default is a second, added to every call). */
const POLL_MS = 200;
const GRANTED = 'granted';
const RELEASE = 'release';

/** The body of a slot's workflow: granted once the queue starts it, held until released. */
export async function holdSlot(dbos: Dbos): Promise<string> {
  await dbos.setEvent(GRANTED, true);
  for (;;) {
    if ((await dbos.recv<string>(RELEASE, 600)) !== null) return 'released';
  }
}

/** The slot queues of this replica (see the module comment). */
export class SlotQueues {
  /** Queues registered by this process, with the limit they were given. */
  private readonly registered = new Map<string, Promise<unknown>>();

  constructor(
    private readonly dbos: Dbos,
    private readonly workflow: (runId: string, holder: string) => Promise<string>,
    private readonly store: PostgresRunStore,
    private readonly warn: (message: string) => void,
  ) {}

  /** Waits for a slot of `limit` for run `runId`; resolves with the function that frees it. */
  async take(limit: SlotLimit, runId: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw cancelledWhileQueued(limit);
    await this.register(limit);
    let id = await this.enqueue(limit, runId);
    try {
      while ((await this.granted(id, signal)) !== true) {
        if (signal.aborted) throw cancelledWhileQueued(limit);
        // Swept as a dead holder's (this replica's heartbeat could not be written for a while):
        // it will never be granted; wait in a new one.
        if ((await this.dbos.getWorkflowStatus(id))?.status === 'CANCELLED')
          id = await this.enqueue(limit, runId);
      }
    } catch (err) {
      // Out of the queue, or out of the count if it was granted meanwhile.
      await this.dbos.cancelWorkflow(id).catch(() => {});
      throw err;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A release lost here is found by the sweep once the run is not running.
      this.dbos
        .send(id, RELEASE, RELEASE)
        .catch((err: unknown) => this.warn(`releasing run slot ${id} failed: ${(err as Error).message}`));
    };
  }

  /** Enqueues a slot for run `runId` on `limit`'s queue; its workflow id. */
  private async enqueue(limit: SlotLimit, runId: string): Promise<string> {
    const id = `${runId}:slot:${randomBytes(4).toString('hex')}`;
    await this.dbos.startWorkflow(this.workflow, { workflowID: id, queueName: limit.queue })(
      runId,
      this.store.replicaId,
    );
    return id;
  }

  /** True once slot `id` is granted; undefined after a wait of at most 5 s or when `signal` fires. */
  private granted(id: string, signal: AbortSignal): Promise<boolean | undefined> {
    let onAbort!: () => void;
    const aborted = new Promise<undefined>((resolve) => {
      onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([this.dbos.getEvent<boolean>(id, GRANTED, { timeoutSeconds: 5 }), aborted])
      .then((v) => v ?? undefined)
      .finally(() => signal.removeEventListener('abort', onAbort));
  }

  /** Registers the queue of `limit` (with its limit now: the last replica to register it sets it). */
  private register(limit: SlotLimit): Promise<unknown> {
    const key = `${limit.queue}\0${limit.max}`;
    let done = this.registered.get(key);
    if (done === undefined) {
      done = this.dbos.registerQueue(limit.queue, {
        globalConcurrency: limit.max,
        minPollingIntervalMs: POLL_MS,
        onConflict: 'always_update',
      });
      done.catch(() => this.registered.delete(key));
      this.registered.set(key, done);
    }
    return done;
  }

  /**
   * Frees the slots held for runs that are not running, nor about to run again (a dead replica's run,
   * claimed and interrupted, waits for a replica to take its workflow), and those of dead holders.
   */
  async sweep(): Promise<void> {
    const slots = await this.dbos.listWorkflows({
      workflowName: SLOT_WORKFLOW,
      status: ['PENDING', 'ENQUEUED'],
      loadInput: true,
      loadOutput: false,
    });
    const taken = slots.map((w) => {
      const [runId, holder] = w.input as [string, string];
      return { runId, holder };
    });
    const used = await slotsInUse(this.store.pool, taken, this.store.heartbeatTimeoutMs);
    for (const [i, w] of slots.entries()) {
      const use = used[i];
      if (use === 'used' || (use === 'interrupted' && (await this.resuming(taken[i]!.runId)))) continue;
      await this.dbos.cancelWorkflow(w.workflowID);
    }
  }

  /** True while a workflow of run `runId` waits to run or runs. */
  private async resuming(runId: string): Promise<boolean> {
    const active = await this.dbos.listWorkflows({
      workflow_id_prefix: runId,
      workflowName: RUN_WORKFLOW,
      status: ['PENDING', 'ENQUEUED'],
      limit: 1,
      loadInput: false,
      loadOutput: false,
    });
    return active.length > 0;
  }
}

/** The error of a call cancelled while it waited for a slot. */
export function cancelledWhileQueued(limit: SlotLimit): HatcheryError {
  return new HatcheryError(
    'ABORTED',
    `the call was cancelled while it waited for a free run slot (${limit.what})`,
  );
}
