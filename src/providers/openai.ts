import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { abortedError, CallGuard, timedOut, toProviderError } from './errors.js';
import {
  fromOpenAIResponse,
  type MaxTokensField,
  OpenAIStreamAccumulator,
  toOpenAIParams,
} from './openai-convert.js';
import { type RetryContext, withRetries } from './retry.js';
import { endpointOf, isChatCompletion, notAReply } from './shape.js';
import { drainStream } from './stream.js';
import type { ChatRequest, ChatResponse, Provider, SdkProviderOptions } from './types.js';

const CLASSES = { APIError, APIUserAbortError, APIConnectionError, APIConnectionTimeoutError };

/** Options of {@link OpenAIProvider} beyond the client. */
export interface OpenAIProviderOptions {
  /** Overrides the client's retry count for every call. */
  maxRetries?: number;
  /** Default: `max_completion_tokens` for api.openai.com, `max_tokens` for other (compatible) servers. */
  maxTokensField?: MaxTokensField;
}

/** OpenAI Chat Completions (and compatible servers) as a Provider; the timeout bounds retries too. */
export class OpenAIProvider implements Provider {
  readonly id = 'openai';
  private readonly maxTokensField: MaxTokensField;

  constructor(
    private readonly client: OpenAI,
    private readonly options: OpenAIProviderOptions = {},
  ) {
    this.maxTokensField =
      options.maxTokensField ??
      (/^https:\/\/api\.openai\.com(\/|$)/.test(client.baseURL) ? 'max_completion_tokens' : 'max_tokens');
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const cancelled = abortedError(request.signal);
    if (cancelled) throw cancelled;
    const guard = new CallGuard(request.signal);
    const timeoutMs =
      request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : this.client.timeout;
    const params = toOpenAIParams(request, { maxTokensField: this.maxTokensField });
    const ctx: RetryContext = {
      vendor: 'OpenAI',
      classes: CLASSES,
      apiKey: this.client.apiKey ?? undefined,
      timeoutMs,
      baseURL: this.client.baseURL,
      signal: request.signal,
      guard,
      maxRetries: this.options.maxRetries ?? this.client.maxRetries,
    };
    const fallback = `${this.client.baseURL.replace(/\/$/, '')}/chat/completions`;
    // The timeout bounds every attempt and retry wait together; the SDK's own retries are off (see retry.ts).
    guard.startDeadline(timeoutMs, () => timedOut('OpenAI', timeoutMs));
    const opts = (timeout: number) => ({ signal: guard.signal, timeout, maxRetries: 0 });
    try {
      if (!request.stream) {
        const { data, response } = await withRetries(
          (timeout) => this.client.chat.completions.create(params, opts(timeout)).withResponse(),
          ctx,
        );
        if (!isChatCompletion(data)) {
          throw notAReply({
            vendor: 'OpenAI',
            what: 'chat completion',
            endpoint: endpointOf(response, fallback),
            response,
            body: data,
            apiKey: ctx.apiKey,
          });
        }
        return fromOpenAIResponse(data);
      }
      const { data: stream, response } = await withRetries(
        (timeout) =>
          this.client.chat.completions
            .create({ ...params, stream: true, stream_options: { include_usage: true } }, opts(timeout))
            .withResponse(),
        ctx,
      );
      // From here on data must keep coming (idle timeout), however long the whole reply takes.
      guard.endDeadline();
      return await drainStream(stream, new OpenAIStreamAccumulator(), guard, {
        vendor: 'OpenAI',
        idleMs: timeoutMs,
        onDelta: request.onDelta,
        endpoint: endpointOf(response, fallback),
        response,
        what: 'stream of chat completion chunks',
      });
    } catch (err) {
      throw toProviderError(err, ctx);
    } finally {
      guard.dispose();
    }
  }
}

/** Options of {@link createOpenAIProvider}. */
export type CreateOpenAIProviderOptions = SdkProviderOptions;

/** Builds an OpenAIProvider with a fresh SDK client. */
export function createOpenAIProvider(options: CreateOpenAIProviderOptions): OpenAIProvider {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? 2,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
  return new OpenAIProvider(client);
}
