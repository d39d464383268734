/**
 * Many watchers of one AbortSignal through a single listener. A fan-out's branches share one signal,
 * and each tool call (or nested fan-out) in them waits on it; Node's EventTarget keeps its listeners
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
