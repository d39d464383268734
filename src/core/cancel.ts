/**
 * Cancellation helpers shared by every layer: what error an abort stands for, linking signals,
 * waiting with a bound, racing work against a signal. (isAbortError stays in errors.ts, which
 * withContext needs.)
 */
import { setMaxListeners } from 'node:events';
import { type ErrorContext, HatcheryError } from './errors.js';

/** The error a fired signal stands for (its HatcheryError reason, else ABORTED), or undefined. */
export function abortedError(
  signal: AbortSignal | undefined,
  context?: ErrorContext,
): HatcheryError | undefined {
  if (!signal?.aborted) return undefined;
  const reason = signal.reason;
  if (reason instanceof HatcheryError) return reason;
  // The context object is made only for an error: a `= {}` default was an allocation per check.
  return new HatcheryError('ABORTED', describeAbort(reason), context ?? {}, { cause: reason });
}

/** Throws a HatcheryError ABORTED (or the signal's own HatcheryError reason) when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, context?: ErrorContext): void {
  if (!signal?.aborted) return;
  const err = abortedError(signal, context);
  if (err) throw err;
}

/** A human message for an abort reason (timeout versus cancellation). */
export function describeAbort(reason: unknown): string {
  if (reason instanceof Error && reason.name === 'TimeoutError') return 'timed out';
  if (reason instanceof HatcheryError) return reason.message;
  return 'the run was cancelled';
}

/**
 * A signal that never fires, for runs started without one. Shared by all of them: fan-outs and
 * providers attach (and remove) listeners to it, so many concurrent runs must not trip Node's
 * max-listeners warning.
 */
export const neverAborted: AbortSignal = (() => {
  const signal = new AbortController().signal;
  setMaxListeners(0, signal);
  return signal;
})();

/** The options of a listener that ends with the one abort it waits for. */
const ONCE = { once: true } as const;

/**
 * A controller that aborts when `parent` does, until unlinked. Used instead of AbortSignal.any so that
 * long-lived signals (server shutdown) do not keep a reference to every call that ever linked to them.
 * The controller is its own listener on `parent` (handleEvent): linking a served call's run makes one
 * object, not a closure per link plus a result object holding the controller and its unlink.
 */
export class LinkedController extends AbortController {
  constructor(private readonly parent?: AbortSignal) {
    super();
    if (parent === undefined) return;
    if (parent.aborted) this.abort(parent.reason);
    else parent.addEventListener('abort', this, ONCE);
  }

  /** The parent signal fired. */
  handleEvent(): void {
    this.abort(this.parent?.reason);
  }

  /** Stops following the parent signal: it keeps no reference to this controller. */
  unlink(): void {
    this.parent?.removeEventListener('abort', this);
  }
}

/** Resolves after `ms`, or early (without error) when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    // Through watchAbort: the sleeps of a fan-out's branches (scripted delays, retry waits) share
    // one listener on its signal instead of adding and searching one each.
    let unwatch: (() => void) | undefined;
    const timer = setTimeout(() => {
      unwatch?.();
      resolve();
    }, ms);
    if (signal)
      unwatch = watchAbort(signal, () => {
        clearTimeout(timer);
        resolve();
      });
  });
}

/**
 * Waits for `promise` but at most `ms` (and no longer than `signal` lets it); true when it settled
 * in time, and its rejection is passed on. The timer is cleared either way, so it never holds the
 * process.
 */
export async function waitAtMost(
  promise: Promise<unknown>,
  ms: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const stop = new LinkedController(signal);
  let settled = false;
  try {
    await Promise.race([promise.then(() => (settled = true)), sleep(ms, stop.signal)]);
  } finally {
    stop.abort();
    stop.unlink();
  }
  return settled;
}

/** Settles like `promise` unless `signal` fires first, then rejects with the abort's error (see abortedError). */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  const early = abortedError(signal);
  if (early) throw early;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Many watchers of one AbortSignal through a single listener. A fan-out's branches share one signal,
 * and each tool call, provider call or nested fan-out in them waits on it (as do the calls of a
 * run on the run's signal); Node's EventTarget keeps its listeners in a list that
 * removeEventListener searches, so a listener per call makes a wide fan-out quadratic. Here adding
 * and removing a watcher is a Set operation, behind the signal's one listener, added with the first
 * watcher and removed with the last.
 */
interface Watchers {
  readonly fns: Set<() => void>;
  readonly listener: () => void;
}

const bySignal = new WeakMap<AbortSignal, Watchers>();

/**
 * Calls `onAbort` once when `signal` aborts, unless the returned function is called first (it must
 * be, when the wait is over, so that nothing of the call stays reachable from the signal). The signal
 * must not be aborted yet: callers check that first.
 */
export function watchAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let w = bySignal.get(signal);
  if (w === undefined) {
    const fns = new Set<() => void>();
    const listener = () => {
      bySignal.delete(signal);
      for (const fn of fns) fn();
      fns.clear();
    };
    w = { fns, listener };
    bySignal.set(signal, w);
    signal.addEventListener('abort', listener, { once: true });
  }
  const own = w;
  own.fns.add(onAbort);
  return () => {
    if (!own.fns.delete(onAbort) || own.fns.size > 0) return;
    // The last watcher is gone: the signal keeps nothing of ours.
    if (bySignal.get(signal) === own) bySignal.delete(signal);
    signal.removeEventListener('abort', own.listener);
  };
}
