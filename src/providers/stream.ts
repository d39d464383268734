import { HatcheryError } from '../core/errors.js';
import type { CallGuard } from './errors.js';
import { notAReply, type ReplyInfo } from './shape.js';
import type { ChatResponse } from './types.js';

/** What each vendor's stream accumulator offers: events in, text deltas out, a reply at the end. */
export interface StreamAccumulator<E> {
  push(event: E): string | undefined;
  readonly finished: boolean;
  finish(): ChatResponse;
}

/**
 * Reads a vendor stream to its end: forwards text deltas, fails with TIMEOUT when no data arrives for
 * `idleMs` (the SDKs' timeouts only cover the wait for headers), and refuses a stream cut short.
 */
export async function drainStream<E>(
  stream: AsyncIterable<E>,
  acc: StreamAccumulator<E>,
  guard: CallGuard,
  opts: {
    vendor: string;
    idleMs: number;
    onDelta: ((text: string) => void) | undefined;
    /** Where the stream came from, for errors (no credentials, no query). */
    endpoint: string;
    /** The raw response, for its content-type when the body was no event stream at all. */
    response: ReplyInfo;
    /** What the stream should have been, e.g. `stream of chat completion chunks`. */
    what: string;
  },
): Promise<ChatResponse> {
  const { vendor, idleMs, endpoint } = opts;
  guard.watchIdle(
    idleMs,
    () =>
      new HatcheryError('TIMEOUT', `${vendor} stream stalled: no data for ${idleMs} ms`, {
        timeoutMs: idleMs,
      }),
  );
  let events = 0;
  for await (const event of stream) {
    events++;
    guard.touch();
    const text = acc.push(event);
    if (text) opts.onDelta?.(text);
  }
  // The SDKs end the iteration quietly on abort, so check before trusting a partial reply.
  guard.check();
  if (!acc.finished) {
    // Not one event: the body was something else (an HTML page, plain JSON) under a 200.
    if (events === 0) throw notAReply({ vendor, what: opts.what, endpoint, response: opts.response });
    throw new HatcheryError(
      'PROVIDER',
      `${vendor} stream from ${endpoint} ended before the reply was complete`,
      { endpoint },
    );
  }
  return acc.finish();
}
