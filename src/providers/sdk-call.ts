/**
 * One model call through a vendor SDK, the same for every vendor: cancellation first, one deadline over
 * every attempt and retry wait, our own retries, the shape check of a 200 reply, and a stream read with
 * an idle timeout. Each vendor only says how to start an attempt and how to read what comes back.
 */
import { abortedError } from '../core/cancel.js';
import { CallGuard, type SdkErrorClasses, toProviderError } from './errors.js';
import { type RetryContext, retryAfter } from './retry.js';
import { endpointOf, notAReply, type ReplyInfo } from './shape.js';
import { drainStream, type StreamAccumulator } from './stream.js';
import type { ChatRequest, ChatResponse } from './types.js';

/** Options of one attempt, as both SDKs take them (their own retries are always off). */
export interface AttemptOptions {
  signal: AbortSignal;
  timeout: number;
  maxRetries: 0;
}

/** What `.withResponse()` of both SDKs resolves to, reduced to what the call reads. */
export interface WithResponse<T> {
  data: T;
  response: ReplyInfo;
}

/**
 * A non-streamed attempt as both SDKs return it (their APIPromise): the parsed body, and the raw
 * response's details on request, which only the error of a body that is not a reply reads.
 */
export type ReplyPromise<T> = Promise<T> & { asResponse(): Promise<ReplyInfo> };

/**
 * What one vendor contributes to {@link sdkChat}: built once per provider. `P` is what the vendor
 * made of one request (its wire parameters), handed back to each of these per call.
 */
export interface SdkCallSpec<P, Reply, Event> {
  /** `OpenAI` or `Anthropic`, as shown to users. */
  vendor: string;
  classes: SdkErrorClasses;
  /** The SDK client's settings: key (scrubbed from errors), base URL, default timeout and retries. */
  client: { apiKey: string | null; baseURL: string; timeout: number; maxRetries: number };
  /** Overrides the client's retry count. */
  maxRetries: number | undefined;
  /** Endpoint path below the base URL, named in errors when the response does not say where it went. */
  path: string;
  /** Starts one non-streaming attempt. */
  reply(params: P, opts: AttemptOptions): ReplyPromise<Reply>;
  /** True when a 200 body is a real reply; `replyWhat` names what it should have been. */
  isReply(body: unknown): boolean;
  replyWhat: string;
  fromReply(body: Reply, params: P): ChatResponse;
  /** Starts one streaming attempt. */
  stream(params: P, opts: AttemptOptions): Promise<WithResponse<AsyncIterable<Event>>>;
  accumulator(params: P): StreamAccumulator<Event>;
  streamWhat: string;
}

/** The endpoint named in errors when the response does not say where the call went. */
function fallbackURL(spec: { client: { baseURL: string }; path: string }): string {
  return `${spec.client.baseURL.replace(/\/$/, '')}${spec.path}`;
}

/**
 * Runs `request` (made into `params` by the vendor) through a vendor SDK as `spec` describes; errors
 * are HatcheryErrors without credentials.
 */
export async function sdkChat<P, Reply, Event>(
  request: ChatRequest,
  spec: SdkCallSpec<P, Reply, Event>,
  params: P,
): Promise<ChatResponse> {
  // The timeout bounds every attempt and retry wait together; the SDKs' own retries are off (see retry.ts).
  // `timeout` is always explicit: without it Anthropic's SDK refuses large non-streaming max_tokens up front.
  const timeoutMs =
    request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : spec.client.timeout;
  // Refused at once when the run is already cancelled; the deadline starts now.
  const cancelled = abortedError(request.signal);
  if (cancelled) throw cancelled;
  const guard = new CallGuard(request.signal);
  guard.startDeadline(timeoutMs, spec.vendor);
  const signal = guard.signal;
  // What retries and error messages need: made only when an attempt failed.
  const context = (): RetryContext => ({
    vendor: spec.vendor,
    classes: spec.classes,
    apiKey: spec.client.apiKey ?? undefined,
    timeoutMs,
    baseURL: spec.client.baseURL,
    signal: request.signal,
    guard,
    maxRetries: spec.maxRetries ?? spec.client.maxRetries,
    onRetry: request.onRetry,
  });
  /** Starts attempts until one answers: the first here, retries only when it failed. */
  const attempt = async <A extends Promise<unknown>>(
    start: (timeout: number) => A,
  ): Promise<{ value: Awaited<A>; attempt: A }> => {
    const first = start(timeoutMs);
    try {
      return { value: (await guard.race(first)) as Awaited<A>, attempt: first };
    } catch (err) {
      return retryAfter(err, start, context());
    }
  };
  // A call that ended with its reply has nothing left in flight: aborting it then only makes the SDK
  // and fetch run their abort handlers (an AbortError with its stack each) for nothing.
  let finished = false;
  try {
    let reply: ChatResponse;
    if (request.stream) {
      const started = await attempt((timeout) => spec.stream(params, { signal, timeout, maxRetries: 0 }));
      const { data: stream, response } = started.value;
      // From here on data must keep coming (idle timeout), however long the whole reply takes.
      guard.endDeadline();
      reply = await drainStream(stream, spec.accumulator(params), guard, {
        vendor: spec.vendor,
        idleMs: timeoutMs,
        onDelta: request.onDelta,
        endpoint: endpointOf(response, fallbackURL(spec)),
        response,
        what: spec.streamWhat,
      });
    } else {
      const last = await attempt((timeout) => spec.reply(params, { signal, timeout, maxRetries: 0 }));
      if (!spec.isReply(last.value)) {
        // The response has settled with the body: its details add no wait.
        const response = await last.attempt.asResponse();
        throw notAReply({
          vendor: spec.vendor,
          what: spec.replyWhat,
          endpoint: endpointOf(response, fallbackURL(spec)),
          response,
          body: last.value,
          apiKey: spec.client.apiKey ?? undefined,
        });
      }
      reply = spec.fromReply(last.value, params);
    }
    finished = true;
    return reply;
  } catch (err) {
    throw toProviderError(err, context());
  } finally {
    guard.dispose(finished);
  }
}
