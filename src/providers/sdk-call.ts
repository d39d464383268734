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
function fallbackURL(spec: SdkCallSpec<unknown, unknown, unknown>): string {
  return `${spec.client.baseURL.replace(/\/$/, '')}${spec.path}`;
}

/**
 * Runs `request` (made into `params` by the vendor) through a vendor SDK as `spec` describes; errors
 * are HatcheryErrors without credentials.
 */
export function sdkChat<P, Reply, Event>(
  request: ChatRequest,
  spec: SdkCallSpec<P, Reply, Event>,
  params: P,
): Promise<ChatResponse> {
  // Two functions: the async frame of the common call (no stream) keeps only what it needs.
  return request.stream ? streamChat(request, spec, params) : replyChat(request, spec, params);
}

/** The call's timeout: the request's own, else the client's (every attempt and retry wait together). */
function timeoutOf(request: ChatRequest, spec: SdkCallSpec<unknown, unknown, unknown>): number {
  return request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : spec.client.timeout;
}

/** What retries and error messages need: made only when an attempt failed. */
function contextOf(
  request: ChatRequest,
  spec: SdkCallSpec<unknown, unknown, unknown>,
  guard: CallGuard,
  timeoutMs: number,
): RetryContext {
  const client = spec.client;
  return {
    vendor: spec.vendor,
    classes: spec.classes,
    apiKey: client.apiKey ?? undefined,
    timeoutMs,
    baseURL: client.baseURL,
    signal: request.signal,
    guard,
    maxRetries: spec.maxRetries ?? client.maxRetries,
    onRetry: request.onRetry,
  };
}

/** Refuses a call whose run is already cancelled, else guards it: its deadline of `timeoutMs` starts now. */
function openGuard(request: ChatRequest, vendor: string, timeoutMs: number): CallGuard {
  const cancelled = abortedError(request.signal);
  if (cancelled) throw cancelled;
  const guard = new CallGuard(request.signal);
  guard.startDeadline(timeoutMs, vendor);
  return guard;
}

/** A non-streamed call: the first attempt here, retries (and their closures) only when it failed. */
async function replyChat<P, Reply, Event>(
  request: ChatRequest,
  spec: SdkCallSpec<P, Reply, Event>,
  params: P,
): Promise<ChatResponse> {
  const loose = spec as SdkCallSpec<unknown, unknown, unknown>;
  const timeoutMs = timeoutOf(request, loose);
  // The timeout bounds every attempt and retry wait together; the SDKs' own retries are off (see retry.ts).
  // `timeout` is always explicit: without it Anthropic's SDK refuses large non-streaming max_tokens up front.
  const guard = openGuard(request, spec.vendor, timeoutMs);
  // A call that ended with its reply has nothing left in flight: aborting it then only makes the SDK
  // and fetch run their abort handlers (an AbortError with its stack each) for nothing.
  let finished = false;
  try {
    let call = spec.reply(params, { signal: guard.signal, timeout: timeoutMs, maxRetries: 0 });
    let data: Reply;
    try {
      data = await guard.race(call);
    } catch (err) {
      const signal = guard.signal;
      const last = await retryAfter(
        err,
        (timeout) => spec.reply(params, { signal, timeout, maxRetries: 0 }),
        contextOf(request, loose, guard, timeoutMs),
      );
      call = last.attempt;
      data = last.value;
    }
    if (!spec.isReply(data)) {
      // The response has settled with the body: its details add no wait.
      const response = await call.asResponse();
      throw notAReply({
        vendor: spec.vendor,
        what: spec.replyWhat,
        endpoint: endpointOf(response, fallbackURL(loose)),
        response,
        body: data,
        apiKey: spec.client.apiKey ?? undefined,
      });
    }
    const reply = spec.fromReply(data, params);
    finished = true;
    return reply;
  } catch (err) {
    throw toProviderError(err, contextOf(request, loose, guard, timeoutMs));
  } finally {
    guard.dispose(finished);
  }
}

/** A streamed call: attempts until the stream starts, then its events read with an idle timeout. */
async function streamChat<P, Reply, Event>(
  request: ChatRequest,
  spec: SdkCallSpec<P, Reply, Event>,
  params: P,
): Promise<ChatResponse> {
  const loose = spec as SdkCallSpec<unknown, unknown, unknown>;
  const timeoutMs = timeoutOf(request, loose);
  const guard = openGuard(request, spec.vendor, timeoutMs);
  let finished = false;
  try {
    const signal = guard.signal;
    const attempt = (timeout: number) => spec.stream(params, { signal, timeout, maxRetries: 0 });
    let started: WithResponse<AsyncIterable<Event>>;
    try {
      started = await guard.race(attempt(timeoutMs));
    } catch (err) {
      started = (await retryAfter(err, attempt, contextOf(request, loose, guard, timeoutMs))).value;
    }
    const { data: stream, response } = started;
    // From here on data must keep coming (idle timeout), however long the whole reply takes.
    guard.endDeadline();
    const reply = await drainStream(stream, spec.accumulator(params), guard, {
      vendor: spec.vendor,
      idleMs: timeoutMs,
      onDelta: request.onDelta,
      endpoint: endpointOf(response, fallbackURL(loose)),
      response,
      what: spec.streamWhat,
    });
    finished = true;
    return reply;
  } catch (err) {
    throw toProviderError(err, contextOf(request, loose, guard, timeoutMs));
  } finally {
    guard.dispose(finished);
  }
}
