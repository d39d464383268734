/** How a run's listeners are put together: tracing first, and no listener can break the run. */
import type { RunListener } from '../engine/contracts.js';

/** The tracing listener first (it sets tool_start.trace), then the run's own; neither can stop the other. */
export function traced(tracer: RunListener, own: RunListener | undefined): RunListener {
  if (!own) return tracer;
  return (event) => {
    try {
      tracer(event);
    } catch {
      // Tracing is best effort.
    }
    own(event);
  };
}

/** Wraps a listener so that its exceptions never break a run. */
export function safeListener(listener: RunListener): RunListener {
  return (event) => {
    try {
      listener(event);
    } catch {
      // A broken progress consumer must not fail the workflow it observes.
    }
  };
}
