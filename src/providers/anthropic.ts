import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { AnthropicStreamAccumulator, fromAnthropicMessage, toAnthropicParams } from './anthropic-convert.js';
import { abortedError, CallGuard, timedOut, toProviderError } from './errors.js';
import { type RetryContext, withRetries } from './retry.js';
import { endpointOf, isAnthropicMessage, notAReply } from './shape.js';
import { drainStream } from './stream.js';
import type { ChatRequest, ChatResponse, Provider, SdkProviderOptions } from './types.js';

const CLASSES = { APIError, APIUserAbortError, APIConnectionError, APIConnectionTimeoutError };

/** Options of {@link AnthropicProvider} beyond the client. */
export interface AnthropicProviderOptions {
  /** Overrides the client's retry count for every call. */
  maxRetries?: number;
}

/** Anthropic Messages as a Provider; the timeout bounds retries too. */
export class AnthropicProvider implements Provider {
  readonly id = 'anthropic';

  constructor(
    private readonly client: Anthropic,
    private readonly options: AnthropicProviderOptions = {},
  ) {}

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const cancelled = abortedError(request.signal);
    if (cancelled) throw cancelled;
    const guard = new CallGuard(request.signal);
    const timeoutMs =
      request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : this.client.timeout;
    const { params, schemaTool } = toAnthropicParams(request);
    const ctx: RetryContext = {
      vendor: 'Anthropic',
      classes: CLASSES,
      apiKey: this.client.apiKey ?? undefined,
      timeoutMs,
      baseURL: this.client.baseURL,
      signal: request.signal,
      guard,
      maxRetries: this.options.maxRetries ?? this.client.maxRetries,
    };
    const fallback = `${this.client.baseURL.replace(/\/$/, '')}/v1/messages`;
    // The timeout bounds every attempt and retry wait together; the SDK's own retries are off (see retry.ts).
    // `timeout` is always explicit: without it the SDK refuses large non-streaming max_tokens up front.
    guard.startDeadline(timeoutMs, () => timedOut('Anthropic', timeoutMs));
    const opts = (timeout: number) => ({ signal: guard.signal, timeout, maxRetries: 0 });
    try {
      if (!request.stream) {
        const { data, response } = await withRetries(
          (timeout) => this.client.messages.create(params, opts(timeout)).withResponse(),
          ctx,
        );
        if (!isAnthropicMessage(data)) {
          throw notAReply({
            vendor: 'Anthropic',
            what: 'Messages API reply',
            endpoint: endpointOf(response, fallback),
            response,
            body: data,
            apiKey: ctx.apiKey,
          });
        }
        return fromAnthropicMessage(data, schemaTool);
      }
      const { data: stream, response } = await withRetries(
        (timeout) => this.client.messages.create({ ...params, stream: true }, opts(timeout)).withResponse(),
        ctx,
      );
      // From here on data must keep coming (idle timeout), however long the whole reply takes.
      guard.endDeadline();
      return await drainStream(stream, new AnthropicStreamAccumulator(schemaTool), guard, {
        vendor: 'Anthropic',
        idleMs: timeoutMs,
        onDelta: request.onDelta,
        endpoint: endpointOf(response, fallback),
        response,
        what: 'stream of Messages API events',
      });
    } catch (err) {
      throw toProviderError(err, ctx);
    } finally {
      guard.dispose();
    }
  }
}

/** Options of {@link createAnthropicProvider}. */
export type CreateAnthropicProviderOptions = SdkProviderOptions;

/** Builds an AnthropicProvider with a fresh SDK client. */
export function createAnthropicProvider(options: CreateAnthropicProviderOptions): AnthropicProvider {
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? 2,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
  return new AnthropicProvider(client);
}
