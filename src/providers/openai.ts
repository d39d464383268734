import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import {
  fromOpenAIResponse,
  type MaxTokensField,
  OpenAIStreamAccumulator,
  toOpenAIParams,
} from './openai-convert.js';
import { sdkChat, type WithResponse } from './sdk-call.js';
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
      reply: (opts) => bodyFirst(completions.create(params, opts)),
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

/**
 * The body of a non-streamed reply, with the response's details (URL, headers) read only when the
 * body is not a chat completion: they are used only to name the endpoint in that error. The same
 * as `.withResponse()`, without its `Promise.all` and second promise on every call.
 */
async function bodyFirst<T>(
  call: Promise<T> & { asResponse(): Promise<Response> },
): Promise<WithResponse<T>> {
  const data = await call;
  // The response promise has settled with the body, so this adds no wait.
  return { data, response: isChatCompletion(data) ? NO_DETAILS : await call.asResponse() };
}

/** What a good reply's response details are never asked for (sdk-call.ts reads them only on a bad one). */
const NO_DETAILS = Object.freeze({ url: '', headers: Object.freeze({ get: () => null }) });

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
