/**
 * The W3C trace context (OpenTelemetry) a run carries from the call that started it to the MCP servers
 * it calls. It arrives from outside (an MCP client's `_meta`), so it is checked and anything malformed
 * is dropped: tracing is best effort and never a reason to refuse a run.
 */

/** A run's trace context: the `traceparent` and `tracestate` of the W3C Trace Context format. */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** version-traceid-parentid-flags, lowercase hex (W3C Trace Context, level 1). */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** A longer tracestate is cut by the spec's rules anyway; 512 characters keep journals small. */
export const MAX_TRACESTATE = 512;
/** Printable ASCII (space to tilde): nothing that could break a header or a log line. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * The trace context in `value` when it is a valid one, else undefined. A valid traceparent matches
 * the W3C format with non-zero trace and parent ids (version ff is invalid too); a tracestate that is
 * not a string of at most 512 printable ASCII characters is dropped on its own, keeping the traceparent.
 */
export function traceContext(value: unknown): TraceContext | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent);
  if (!m || traceparent.startsWith('ff') || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  const trace: TraceContext = { traceparent };
  if (
    typeof tracestate === 'string' &&
    tracestate.length > 0 &&
    tracestate.length <= MAX_TRACESTATE &&
    PRINTABLE.test(tracestate)
  ) {
    trace.tracestate = tracestate;
  }
  return trace;
}
