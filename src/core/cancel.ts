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
 * A controller that aborts when any of `signals` does, and a function that detaches it again.
 * Used instead of AbortSignal.any so that long-lived signals (server shutdown) do not keep a
 * reference to every call that ever linked to them.
 */
export function linkedController(...signals: (AbortSignal | undefined)[]): {
  controller: AbortController;
  unlink: () => void;
} {
  const controller = new AbortController();
  // One closure chain instead of an array of them: a served call links one signal per run.
  let detach: (() => void) | undefined;
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    const onAbort = () => controller.abort(s.reason);
    s.addEventListener('abort', onAbort, ONCE);
    const before = detach;
    detach = () => {
      before?.();
      s.removeEventListener('abort', onAbort);
    };
  }
  return {
    controller,
    unlink: () => {
      const d = detach;
      detach = undefined;
      d?.();
    },
  };
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
  const { controller: stop, unlink } = linkedController(signal);
  let settled = false;
  try {
    await Promise.race([promise.then(() => (settled = true)), sleep(ms, stop.signal)]);
  } finally {
    stop.abort();
    unlink();
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
 * run on the run's signal); Node's EventTarget keeps its listeners
 * in a list that removeEventListener searches, so a listener per call makes a wide fan-out quadratic
 * and allocates a listener record per call. Here adding and removing a watcher is a Set operation;
 * the signal's one listener is added with the first watcher and removed with the last.
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
