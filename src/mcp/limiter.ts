import { HatcheryError } from '../core/errors.js';

/**
 * Caps how many runs execute at once (--max-concurrent); the rest wait in arrival order.
 * A waiting call whose signal fires leaves the queue at once.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: { resolve: () => void; signal: AbortSignal; onAbort: () => void }[] = [];

  /** `max` undefined means no limit. */
  constructor(readonly max: number | undefined) {}

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
    if (signal.aborted) throw abortedWhileQueued();
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
          reject(abortedWhileQueued());
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

function abortedWhileQueued(): HatcheryError {
  return new HatcheryError(
    'ABORTED',
    'the call was cancelled while it waited for a free run slot (--max-concurrent)',
  );
}
