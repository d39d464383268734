/**
 * One model call through a vendor SDK, the same for every vendor: cancellation first, one deadline over
 * every attempt and retry wait, our own retries, the shape check of a 200 reply, and a stream read with
 * an idle timeout. Each vendor only says how to start an attempt and how to read what comes back.
 */
import { abortedError } from '../core/cancel.js';
import { CallGuard, type SdkErrorClasses, timedOut, toProviderError } from './errors.js';
import { type RetryContext, withRetries } from './retry.js';
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

/** What one vendor contributes to {@link sdkChat}. */
export interface SdkCallSpec<Reply, Event> {
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
  reply(opts: AttemptOptions): Promise<WithResponse<Reply>>;
  /** True when a 200 body is a real reply; `replyWhat` names what it should have been. */
  isReply(body: unknown): boolean;
  replyWhat: string;
  fromReply(body: Reply): ChatResponse;
  /** Starts one streaming attempt. */
  stream(opts: AttemptOptions): Promise<WithResponse<AsyncIterable<Event>>>;
  accumulator(): StreamAccumulator<Event>;
  streamWhat: string;
}

/** Runs `request` through a vendor SDK as `spec` describes; errors are HatcheryErrors without credentials. */
export async function sdkChat<Reply, Event>(
  request: ChatRequest,
  spec: SdkCallSpec<Reply, Event>,
): Promise<ChatResponse> {
  const cancelled = abortedError(request.signal);
  if (cancelled) throw cancelled;
  const { client, vendor } = spec;
  const guard = new CallGuard(request.signal);
  const timeoutMs =
    request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : client.timeout;
  const ctx: RetryContext = {
    vendor,
    classes: spec.classes,
    apiKey: client.apiKey ?? undefined,
    timeoutMs,
    baseURL: client.baseURL,
    signal: request.signal,
    guard,
    maxRetries: spec.maxRetries ?? client.maxRetries,
    onRetry: request.onRetry,
  };
  const fallback = `${client.baseURL.replace(/\/$/, '')}${spec.path}`;
  // The timeout bounds every attempt and retry wait together; the SDKs' own retries are off (see retry.ts).
  // `timeout` is always explicit: without it Anthropic's SDK refuses large non-streaming max_tokens up front.
  guard.startDeadline(timeoutMs, () => timedOut(vendor, timeoutMs));
  const opts = (timeout: number): AttemptOptions => ({ signal: guard.signal, timeout, maxRetries: 0 });
  // A call that ended with its reply has nothing left in flight: aborting it then only makes the SDK
  // and fetch run their abort handlers (an AbortError with its stack each) for nothing.
  let finished = false;
  try {
    if (!request.stream) {
      const { data, response } = await withRetries((timeout) => spec.reply(opts(timeout)), ctx);
      if (!spec.isReply(data)) {
        throw notAReply({
          vendor,
          what: spec.replyWhat,
          endpoint: endpointOf(response, fallback),
          response,
          body: data,
          apiKey: ctx.apiKey,
        });
      }
      const reply = spec.fromReply(data);
      finished = true;
      return reply;
    }
    const { data: stream, response } = await withRetries((timeout) => spec.stream(opts(timeout)), ctx);
    // From here on data must keep coming (idle timeout), however long the whole reply takes.
    guard.endDeadline();
    const reply = await drainStream(stream, spec.accumulator(), guard, {
      vendor,
      idleMs: timeoutMs,
      onDelta: request.onDelta,
      endpoint: endpointOf(response, fallback),
      response,
      what: spec.streamWhat,
    });
    finished = true;
    return reply;
  } catch (err) {
    throw toProviderError(err, ctx);
  } finally {
    guard.dispose(finished);
  }
}
