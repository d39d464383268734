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
  const detach: (() => void)[] = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    const onAbort = () => controller.abort(s.reason);
    s.addEventListener('abort', onAbort, { once: true });
    detach.push(() => s.removeEventListener('abort', onAbort));
  }
  return {
    controller,
    unlink: () => {
      for (const d of detach) d();
      detach.length = 0;
    },
  };
}

/** Resolves after `ms`, or early (without error) when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Waits for `promise` but at most `ms`; the timer is cleared either way, so it never holds the process. */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  const stop = new AbortController();
  try {
    await Promise.race([promise, sleep(ms, stop.signal)]);
  } finally {
    stop.abort();
  }
}
