/**
 * Pure conversion between the vendor-neutral chat types and OpenAI Chat Completions wire types.
 * No I/O here, so the mapping can be tested without a server.
 */
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ChatMessage, ChatRequest, ChatResponse, ToolCall, Usage } from './types.js';

/** Which request field carries the output-token limit. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/** Options of {@link toOpenAIParams}. */
export interface OpenAIParamsOptions {
  /**
   * OpenAI's own API wants `max_completion_tokens` (reasoning models reject `max_tokens`); many
   * OpenAI-compatible servers only know `max_tokens`. Default `max_completion_tokens`.
   */
  maxTokensField?: MaxTokensField;
}

/** Names of tools and schemas must match `^[a-zA-Z0-9_-]{1,64}$` on both vendors. */
export function safeName(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return s || 'output';
}

function toOpenAIMessage(m: ChatMessage): ChatCompletionMessageParam {
  if (m.role === 'user') return { role: 'user', content: m.content };
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  const calls = m.toolCalls ?? [];
  if (calls.length === 0) return { role: 'assistant', content: m.content };
  return {
    role: 'assistant',
    // Some compatible servers reject '' next to tool_calls; null is what OpenAI itself sends.
    content: m.content || null,
    tool_calls: calls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
    })),
  };
}

/** Converts the conversation, with the system prompt as the first system message. */
export function toOpenAIMessages(
  system: string,
  messages: readonly ChatMessage[],
): ChatCompletionMessageParam[] {
  const out = messages.map(toOpenAIMessage);
  if (system) out.unshift({ role: 'system', content: system });
  return out;
}

/** Converts the neutral tool choice. */
function toOpenAIToolChoice(choice: ChatRequest['toolChoice']): ChatCompletionToolChoiceOption {
  if (choice === undefined || choice === 'auto') return 'auto';
  if (choice === 'required') return 'required';
  return { type: 'function', function: { name: choice.name } };
}

/** Builds non-streaming create() params; the provider adds `stream` and `stream_options` itself. */
export function toOpenAIParams(
  request: ChatRequest,
  options: OpenAIParamsOptions = {},
): ChatCompletionCreateParamsNonStreaming {
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: request.model,
    messages: toOpenAIMessages(request.system, request.messages),
  };
  if (request.tools && request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({
      type: 'function' as const,
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
    // tool_choice without tools is a 400 on OpenAI, so it is only sent alongside them.
    if (request.toolChoice !== undefined) params.tool_choice = toOpenAIToolChoice(request.toolChoice);
  }
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.maxTokens !== undefined) {
    if ((options.maxTokensField ?? 'max_completion_tokens') === 'max_tokens')
      params.max_tokens = request.maxTokens;
    else params.max_completion_tokens = request.maxTokens;
  }
  if (request.responseSchema) {
    params.response_format = {
      type: 'json_schema',
      // strict:false: strict mode rejects ordinary schemas (optional fields, no additionalProperties:false).
      json_schema: {
        name: safeName(request.responseSchema.name),
        schema: request.responseSchema.schema,
        strict: false,
      },
    };
  }
  return params;
}

/** Parses a tool call's argument text; a non-object or invalid JSON sets `argsError` and `args` `{}`. */
export function parseToolArgs(id: string, name: string, text: string | undefined): ToolCall {
  const raw = (text ?? '').trim();
  if (raw === '') return { id, name, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { id, name, args: {}, argsError: `the arguments are not valid JSON (${why}): ${clip(raw)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return {
      id,
      name,
      args: {},
      argsError: `the arguments must be a JSON object, got ${kind}: ${clip(raw)}`,
    };
  }
  return { id, name, args: value as Record<string, unknown> };
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Converts OpenAI usage; absent usage (some compatible servers) counts as zero. */
export function fromOpenAIUsage(usage: CompletionUsage | null | undefined): Usage {
  const out: Usage = { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 };
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  if (cached > 0) out.cachedInputTokens = cached;
  return out;
}

/** Converts a non-streaming completion (first choice). */
export function fromOpenAIResponse(completion: ChatCompletion): ChatResponse {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const toolCalls: ToolCall[] = [];
  for (const c of message?.tool_calls ?? []) {
    if (c.type === 'function') toolCalls.push(parseToolArgs(c.id, c.function.name, c.function.arguments));
    else if (c.type === 'custom') toolCalls.push(parseToolArgs(c.id, c.custom.name, c.custom.input));
  }
  // A refusal arrives instead of content; surfacing it beats returning an empty reply.
  const text = message?.content || message?.refusal || '';
  const res: ChatResponse = { text, toolCalls, usage: fromOpenAIUsage(completion.usage) };
  if (choice?.finish_reason) res.stopReason = choice.finish_reason;
  return res;
}

interface PartialCall {
  id: string;
  name: string;
  args: string;
}

/** Merges `chat.completion.chunk` deltas into one response. */
export class OpenAIStreamAccumulator {
  private text = '';
  private refusal = '';
  private readonly calls = new Map<number, PartialCall>();
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private stopReason: string | undefined;

  /** Adds one chunk; returns its text fragment, if any, for progress callbacks. */
  push(chunk: ChatCompletionChunk): string | undefined {
    if (chunk.usage) this.usage = fromOpenAIUsage(chunk.usage);
    let fragment: string | undefined;
    for (const choice of chunk.choices ?? []) {
      // Only the first choice is used; n>1 is never requested.
      if (choice.index !== 0) continue;
      const delta = choice.delta;
      if (delta?.content) {
        this.text += delta.content;
        fragment = (fragment ?? '') + delta.content;
      }
      if (delta?.refusal) this.refusal += delta.refusal;
      for (const tc of delta?.tool_calls ?? []) {
        let call = this.calls.get(tc.index);
        if (!call) {
          call = { id: '', name: '', args: '' };
          this.calls.set(tc.index, call);
        }
        if (tc.id) call.id = tc.id;
        // The name comes whole in the first fragment; some compatible servers repeat it later.
        if (tc.function?.name && !call.name) call.name = tc.function.name;
        if (tc.function?.arguments) call.args += tc.function.arguments;
      }
      if (choice.finish_reason) this.stopReason = choice.finish_reason;
    }
    return fragment;
  }

  /** True once a chunk carried a finish reason; a stream that ends before that was cut off. */
  get finished(): boolean {
    return this.stopReason !== undefined;
  }

  /** The merged response. */
  finish(): ChatResponse {
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => parseToolArgs(c.id || `call_${index}`, c.name, c.args));
    const res: ChatResponse = {
      text: this.text || this.refusal,
      toolCalls,
      usage: { ...this.usage },
    };
    if (this.stopReason) res.stopReason = this.stopReason;
    return res;
  }
}
