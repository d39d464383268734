import { HatcheryError } from '../core/errors.js';
import type { Hatchery } from '../engine/contracts.js';
import type { DurableEngine, SlotLimit } from '../runtime/options.js';

/** The queue of the server's limit; a hatchery's is this, a colon and its name. */
const SERVER_QUEUE = 'hatchery-runs';

/**
 * The run slots a call waits for before its run starts: its hatchery's (`max_concurrent`), then the
 * server's (`--max-concurrent`). Counted in this process, or, on a durable engine, by queues every
 * replica shares (runtime/durable/slots.ts).
 */
export class RunSlots {
  /** This process's limiters, by queue. */
  private readonly local = new Map<string, Limiter>();

  /** `max` undefined means no server-wide limit. */
  constructor(readonly max: number | undefined) {}

  /**
   * Waits for the slots of a run `runId` of `h` (telling `queued` first, when it has a limit); resolves
   * with the function that frees them, if any.
   */
  async acquire(
    h: Hatchery,
    runId: string,
    signal: AbortSignal,
    engine: DurableEngine | undefined,
    queued?: () => void,
  ): Promise<(() => void) | undefined> {
    const limits: SlotLimit[] = [];
    const own = h.def.max_concurrent;
    if (own !== undefined)
      limits.push({ queue: `${SERVER_QUEUE}:${h.name}`, max: own, what: `max_concurrent of ${h.name}` });
    if (this.max !== undefined) limits.push({ queue: SERVER_QUEUE, max: this.max, what: '--max-concurrent' });
    if (limits.length === 0) return undefined;
    queued?.();
    const releases: (() => void)[] = [];
    try {
      for (const limit of limits)
        releases.push(
          await (engine ? engine.slot(limit, runId, signal) : this.limiter(limit).acquire(signal)),
        );
    } catch (err) {
      for (const release of releases) release();
      throw err;
    }
    return () => {
      for (const release of releases.reverse()) release();
    };
  }

  /** The limiter of `limit`'s queue (a new one when a reloaded file changed its limit). */
  private limiter(limit: SlotLimit): Limiter {
    let limiter = this.local.get(limit.queue);
    if (limiter?.max !== limit.max) {
      limiter = new Limiter(limit.max, limit.what);
      this.local.set(limit.queue, limiter);
    }
    return limiter;
  }
}

/**
 * Caps how many runs execute at once in this process; the rest wait in arrival order.
 * A waiting call whose signal fires leaves the queue at once.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: { resolve: () => void; signal: AbortSignal; onAbort: () => void }[] = [];

  /** `max` undefined means no limit; `what` names the limit in errors (`--max-concurrent`). */
  constructor(
    readonly max: number | undefined,
    private readonly what = '--max-concurrent',
  ) {}

  /** Runs executing now. */
  get active(): number {
    return this.running;
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Waits for a slot; resolves with the function that frees it (call it exactly once). */
  async acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw abortedWhileQueued(this.what);
    if (this.max === undefined || this.running < this.max) {
      this.running++;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const item = {
        resolve,
        signal,
        onAbort: () => {
          const i = this.waiting.indexOf(item);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(abortedWhileQueued(this.what));
        },
      };
      signal.addEventListener('abort', item.onAbort, { once: true });
      this.waiting.push(item);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) {
        // The slot passes straight to the next caller, so `running` stays the same.
        next.signal.removeEventListener('abort', next.onAbort);
        next.resolve();
      } else {
        this.running--;
      }
    };
  }
}

function abortedWhileQueued(what: string): HatcheryError {
  return new HatcheryError('ABORTED', `the call was cancelled while it waited for a free run slot (${what})`);
}
