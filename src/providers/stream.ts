import { HatcheryError } from '../errors.js';
import type { CallGuard } from './errors.js';
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
  opts: { vendor: string; idleMs: number; onDelta: ((text: string) => void) | undefined },
): Promise<ChatResponse> {
  const { vendor, idleMs } = opts;
  guard.watchIdle(
    idleMs,
    () =>
      new HatcheryError('TIMEOUT', `${vendor} stream stalled: no data for ${idleMs} ms`, {
        timeoutMs: idleMs,
      }),
  );
  for await (const event of stream) {
    guard.touch();
    const text = acc.push(event);
    if (text) opts.onDelta?.(text);
  }
  // The SDKs end the iteration quietly on abort, so check before trusting a partial reply.
  guard.check();
  if (!acc.finished)
    throw new HatcheryError('PROVIDER', `${vendor} stream ended before the reply was complete`);
  return acc.finish();
}
