import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import {
  fromOpenAIResponse,
  type MaxTokensField,
  OpenAIStreamAccumulator,
  toOpenAIParams,
} from './openai-convert.js';
import { sdkChat } from './sdk-call.js';
import { isChatCompletion } from './shape.js';
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
    const params = toOpenAIParams(request, { maxTokensField: this.maxTokensField });
    const completions = this.client.chat.completions;
    return sdkChat(request, {
      vendor: 'OpenAI',
      classes: CLASSES,
      client: this.client,
      maxRetries: this.options.maxRetries,
      path: '/chat/completions',
      reply: (opts) => completions.create(params, opts).withResponse(),
      isReply: isChatCompletion,
      replyWhat: 'chat completion',
      fromReply: fromOpenAIResponse,
      stream: (opts) =>
        completions
          .create({ ...params, stream: true, stream_options: { include_usage: true } }, opts)
          .withResponse(),
      accumulator: () => new OpenAIStreamAccumulator(),
      streamWhat: 'stream of chat completion chunks',
    });
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
