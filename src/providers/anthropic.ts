import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type { Message, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import {
  type AnthropicParams,
  AnthropicStreamAccumulator,
  fromAnthropicMessage,
  toAnthropicParams,
} from './anthropic-convert.js';
import { sdkClientOptions } from './reply-cap.js';
import { type SdkCallSpec, sdkChat } from './sdk-call.js';
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
  /** How sdkChat calls this client: the same for every call (the request's part is its AnthropicParams). */
  private readonly spec: SdkCallSpec<AnthropicParams, Message, RawMessageStreamEvent>;

  constructor(
    readonly client: Anthropic,
    options: AnthropicProviderOptions = {},
  ) {
    const messages = client.messages;
    this.spec = {
      vendor: 'Anthropic',
      classes: CLASSES,
      client,
      maxRetries: options.maxRetries,
      path: '/v1/messages',
      reply: ({ params }, opts) => messages.create(params, opts),
      isReply: isAnthropicMessage,
      replyWhat: 'Messages API reply',
      fromReply: (message, { schemaTool }) => fromAnthropicMessage(message, schemaTool),
      stream: ({ params }, opts) => messages.create({ ...params, stream: true }, opts).withResponse(),
      accumulator: ({ schemaTool }) => new AnthropicStreamAccumulator(schemaTool),
      streamWhat: 'stream of Messages API events',
    };
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    return sdkChat(request, this.spec, toAnthropicParams(request));
  }
}

/** Builds an AnthropicProvider with a fresh SDK client. */
export function createAnthropicProvider(options: SdkProviderOptions): AnthropicProvider {
  return new AnthropicProvider(new Anthropic(sdkClientOptions(options)));
}
