import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { AnthropicStreamAccumulator, fromAnthropicMessage, toAnthropicParams } from './anthropic-convert.js';
import { abortedError, CallGuard, type ErrorMappingContext, toProviderError } from './errors.js';
import { drainStream } from './stream.js';
import type { ChatRequest, ChatResponse, Provider, SdkProviderOptions } from './types.js';

const CLASSES = { APIError, APIUserAbortError, APIConnectionError, APIConnectionTimeoutError };

/** Options of {@link AnthropicProvider} beyond the client. */
export interface AnthropicProviderOptions {
  /** Overrides the client's retry count for every call. */
  maxRetries?: number;
}

/** Anthropic Messages as a Provider; retries and timeouts are the SDK's. */
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
    const timeoutMs = request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : undefined;
    const opts = {
      signal: guard.signal,
      // Always explicit: without it the SDK refuses large non-streaming max_tokens up front.
      timeout: timeoutMs ?? this.client.timeout,
      ...(this.options.maxRetries !== undefined ? { maxRetries: this.options.maxRetries } : {}),
    };
    const { params, schemaTool } = toAnthropicParams(request);
    const ctx: ErrorMappingContext = {
      vendor: 'Anthropic',
      classes: CLASSES,
      apiKey: this.client.apiKey ?? undefined,
      timeoutMs: opts.timeout,
      baseURL: this.client.baseURL,
      signal: request.signal,
      guard,
    };
    try {
      if (!request.stream) {
        return fromAnthropicMessage(await guard.race(this.client.messages.create(params, opts)), schemaTool);
      }
      const stream = await guard.race(this.client.messages.create({ ...params, stream: true }, opts));
      return await drainStream(stream, new AnthropicStreamAccumulator(schemaTool), guard, {
        vendor: 'Anthropic',
        idleMs: opts.timeout,
        onDelta: request.onDelta,
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
