import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import {
  fromOpenAIResponse,
  type MaxTokensField,
  OpenAIStreamAccumulator,
  toOpenAIParams,
} from './openai-convert.js';
import { sdkClientOptions } from './reply-cap.js';
import { type SdkCallSpec, sdkChat } from './sdk-call.js';
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

type Params = ChatCompletionCreateParamsNonStreaming;

/** OpenAI Chat Completions (and compatible servers) as a Provider; the timeout bounds retries too. */
export class OpenAIProvider implements Provider {
  readonly id = 'openai';
  private readonly maxTokensField: MaxTokensField;
  /** How sdkChat calls this client: the same for every call (the request's part is `params`). */
  private readonly spec: SdkCallSpec<Params, ChatCompletion, ChatCompletionChunk>;

  constructor(
    readonly client: OpenAI,
    options: OpenAIProviderOptions = {},
  ) {
    this.maxTokensField =
      options.maxTokensField ??
      (/^https:\/\/api\.openai\.com(\/|$)/.test(client.baseURL) ? 'max_completion_tokens' : 'max_tokens');
    const completions = client.chat.completions;
    this.spec = {
      vendor: 'OpenAI',
      classes: CLASSES,
      client,
      maxRetries: options.maxRetries,
      path: '/chat/completions',
      reply: (params, opts) => completions.create(params, opts),
      isReply: isChatCompletion,
      replyWhat: 'chat completion',
      fromReply: fromOpenAIResponse,
      stream: (params, opts) =>
        completions
          .create({ ...params, stream: true, stream_options: { include_usage: true } }, opts)
          .withResponse(),
      accumulator: () => new OpenAIStreamAccumulator(),
      streamWhat: 'stream of chat completion chunks',
    };
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    return sdkChat(request, this.spec, toOpenAIParams(request, { maxTokensField: this.maxTokensField }));
  }
}

/** Builds an OpenAIProvider with a fresh SDK client. */
export function createOpenAIProvider(options: SdkProviderOptions): OpenAIProvider {
  return new OpenAIProvider(new OpenAI(sdkClientOptions(options)));
}
