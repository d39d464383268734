import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { abortedError, CallGuard, type ErrorMappingContext, toProviderError } from './errors.js';
import {
  fromOpenAIResponse,
  type MaxTokensField,
  OpenAIStreamAccumulator,
  toOpenAIParams,
} from './openai-convert.js';
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

/** OpenAI Chat Completions (and compatible servers) as a Provider; retries and timeouts are the SDK's. */
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
    const timeoutMs = request.timeoutMs !== undefined ? Math.max(1, Math.ceil(request.timeoutMs)) : undefined;
    const opts = {
      signal: guard.signal,
      ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
      ...(this.options.maxRetries !== undefined ? { maxRetries: this.options.maxRetries } : {}),
    };
    const params = toOpenAIParams(request, { maxTokensField: this.maxTokensField });
    const ctx: ErrorMappingContext = {
      vendor: 'OpenAI',
      classes: CLASSES,
      apiKey: this.client.apiKey ?? undefined,
      timeoutMs: timeoutMs ?? this.client.timeout,
      baseURL: this.client.baseURL,
      signal: request.signal,
      guard,
    };
    try {
      if (!request.stream) {
        return fromOpenAIResponse(await guard.race(this.client.chat.completions.create(params, opts)));
      }
      const stream = await guard.race(
        this.client.chat.completions.create(
          { ...params, stream: true, stream_options: { include_usage: true } },
          opts,
        ),
      );
      return await drainStream(stream, new OpenAIStreamAccumulator(), guard, {
        vendor: 'OpenAI',
        idleMs: ctx.timeoutMs,
        onDelta: request.onDelta,
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
