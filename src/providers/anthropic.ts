import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { AnthropicStreamAccumulator, fromAnthropicMessage, toAnthropicParams } from './anthropic-convert.js';
import { sdkChat } from './sdk-call.js';
import { isAnthropicMessage } from './shape.js';
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
    const { params, schemaTool } = toAnthropicParams(request);
    const messages = this.client.messages;
    return sdkChat(request, {
      vendor: 'Anthropic',
      classes: CLASSES,
      client: this.client,
      maxRetries: this.options.maxRetries,
      path: '/v1/messages',
      reply: (opts) => messages.create(params, opts).withResponse(),
      isReply: isAnthropicMessage,
      replyWhat: 'Messages API reply',
      fromReply: (message) => fromAnthropicMessage(message, schemaTool),
      stream: (opts) => messages.create({ ...params, stream: true }, opts).withResponse(),
      accumulator: () => new AnthropicStreamAccumulator(schemaTool),
      streamWhat: 'stream of Messages API events',
    });
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
