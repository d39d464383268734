/**
 * Pure conversion between the vendor-neutral chat types and the Anthropic Messages wire types.
 * No I/O here, so the mapping can be tested without a server.
 */
import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  RawMessageStreamEvent,
  Tool,
  ToolChoice,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { parseToolArgs, safeName } from './openai-convert.js';
import type { ChatMessage, ChatRequest, ChatResponse, ToolCall, Usage } from './types.js';

/** max_tokens is mandatory on Anthropic; this is sent when the request sets none. */
const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/**
 * The tool that stands in for structured output: the SDK's API version has no `response_format`
 * that works on every model, but a forced tool call always returns arguments shaped by its schema.
 */
export interface SchemaTool {
  name: string;
  /** The schema's root was not an object, so it sits under `value` of an object schema. */
  wrapped: boolean;
}

/** Params plus the structured-output tool, which the response conversion needs to recognise. */
export interface AnthropicParams {
  params: MessageCreateParamsNonStreaming;
  schemaTool?: SchemaTool;
}

// Anthropic ids must match ^[a-zA-Z0-9_-]+$; ids from other vendors' histories may not.
const safeId = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, '_') || 'call';

function blocksOf(m: ChatMessage & { role: 'assistant' }): ContentBlockParam[] {
  const blocks: ContentBlockParam[] = [];
  if (m.content) blocks.push({ type: 'text', text: m.content });
  for (const c of m.toolCalls ?? []) {
    blocks.push({ type: 'tool_use', id: safeId(c.id), name: c.name, input: c.args ?? {} });
  }
  return blocks;
}

function resultOf(m: ChatMessage & { role: 'tool' }): ToolResultBlockParam {
  const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: safeId(m.toolCallId) };
  if (m.content) block.content = m.content;
  if (m.isError) block.is_error = true;
  return block;
}

/** Converts the conversation; the results of one assistant turn go into ONE user message. */
export function toAnthropicMessages(messages: readonly ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  // The array of merged tool results that later messages may join.
  let open: ContentBlockParam[] | undefined;
  for (const m of messages) {
    if (m.role === 'user') {
      // A user turn right after tool results joins them (results first, as the API requires).
      if (open) open.push({ type: 'text', text: m.content });
      else out.push({ role: 'user', content: m.content });
      open = undefined;
    } else if (m.role === 'assistant') {
      const blocks = blocksOf(m);
      // The API rejects empty assistant turns; skipping one leaves two user turns, which it merges.
      if (blocks.length > 0) {
        out.push({ role: 'assistant', content: blocks });
        open = undefined;
      }
    } else {
      const block = resultOf(m);
      if (open) open.push(block);
      else {
        open = [block];
        out.push({ role: 'user', content: open });
      }
    }
  }
  return out;
}

/** Converts the neutral tool choice. */
function toAnthropicToolChoice(choice: ChatRequest['toolChoice']): ToolChoice {
  if (choice === undefined || choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema.type === 'object' || (schema.type === undefined && typeof schema.properties === 'object');
}

/**
 * Builds non-streaming create() params. `temperature` is not sent: the SDK's API version (2026-10-21)
 * no longer has sampling parameters.
 */
export function toAnthropicParams(request: ChatRequest): AnthropicParams {
  const params: MessageCreateParamsNonStreaming = {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages: toAnthropicMessages(request.messages),
  };
  if (request.system) params.system = request.system;
  const tools: Tool[] = (request.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: { type: 'object', ...t.inputSchema } as Tool.InputSchema,
  }));
  let toolChoice: ToolChoice | undefined =
    tools.length > 0 && request.toolChoice !== undefined
      ? toAnthropicToolChoice(request.toolChoice)
      : undefined;
  let schemaTool: SchemaTool | undefined;
  if (request.responseSchema) {
    const schema = request.responseSchema.schema;
    const wrapped = !isObjectSchema(schema);
    schemaTool = { name: safeName(request.responseSchema.name), wrapped };
    tools.push({
      name: schemaTool.name,
      description: 'Give your final answer by calling this tool; its input is the answer.',
      input_schema: (wrapped
        ? { type: 'object', properties: { value: schema }, required: ['value'] }
        : { ...schema, type: 'object' }) as Tool.InputSchema,
    });
    // Forcing it alone would stop the model from using its other tools first.
    if (tools.length === 1) toolChoice = { type: 'tool', name: schemaTool.name };
  }
  if (tools.length > 0) params.tools = tools;
  if (toolChoice) params.tool_choice = toolChoice;
  if (request.cache !== false) addCacheBreakpoints(params);
  return schemaTool ? { params, schemaTool } : { params };
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * Prompt caching: a breakpoint after the tool definitions, after the system prompt and after the
 * last message, so that each turn of a tool loop reads the conversation so far from the cache (the
 * API looks back from a breakpoint for the longest prefix it cached). Three of the four breakpoints
 * the API allows; a prefix shorter than the model's minimum is simply not cached.
 */
function addCacheBreakpoints(params: MessageCreateParamsNonStreaming): void {
  const tools = params.tools;
  const lastTool = tools?.[tools.length - 1];
  if (tools && lastTool) tools[tools.length - 1] = { ...lastTool, cache_control: EPHEMERAL } as Tool;
  if (typeof params.system === 'string' && params.system !== '') {
    params.system = [{ type: 'text', text: params.system, cache_control: EPHEMERAL }];
  }
  const last = params.messages[params.messages.length - 1];
  if (!last) return;
  if (typeof last.content === 'string') {
    if (last.content === '') return;
    last.content = [{ type: 'text', text: last.content, cache_control: EPHEMERAL }];
    return;
  }
  const blocks = last.content;
  const block = blocks[blocks.length - 1];
  // Empty text blocks cannot carry a breakpoint; thinking blocks never do.
  if (
    !block ||
    (block.type === 'text' && block.text === '') ||
    block.type === 'thinking' ||
    block.type === 'redacted_thinking'
  )
    return;
  blocks[blocks.length - 1] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam;
}

/** The token counts of Anthropic's usage objects (message_start, message_delta, a whole message). */
const USAGE_FIELDS = [
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
] as const;

/** Anthropic usage as any of those events carries it: a count may be absent or null. */
type RawUsage = { [K in (typeof USAGE_FIELDS)[number]]?: number | null };

/**
 * Converts Anthropic usage; cache reads and writes count as input, as OpenAI's prompt_tokens do, and
 * cache reads are also reported as cachedInputTokens (priced at the cached price).
 */
export function fromAnthropicUsage(usage: RawUsage | null | undefined): Usage {
  const cached = usage?.cache_read_input_tokens ?? 0;
  const out: Usage = {
    inputTokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + cached,
    outputTokens: usage?.output_tokens ?? 0,
  };
  if (cached > 0) out.cachedInputTokens = cached;
  return out;
}

/** A non-streamed tool_use input (an object on the wire) as a ToolCall. */
function toToolCall(id: string, name: string, input: unknown): ToolCall {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return parseToolArgs(id, name, JSON.stringify(input ?? null));
  }
  return { id, name, args: input as Record<string, unknown> };
}

/** Splits the structured-output call off the tool calls of `res` and turns it into the reply text. */
function applySchemaTool(res: ChatResponse, schemaTool: SchemaTool | undefined): ChatResponse {
  const hit = schemaTool && res.toolCalls.find((c) => c.name === schemaTool.name);
  if (!hit) return res;
  res.text = JSON.stringify((schemaTool?.wrapped ? hit.args.value : hit.args) ?? null);
  res.toolCalls = res.toolCalls.filter((c) => c !== hit);
  return res;
}

/** Converts a non-streaming message. */
export function fromAnthropicMessage(message: Message, schemaTool?: SchemaTool): ChatResponse {
  let text = '';
  const calls: ToolCall[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') calls.push(toToolCall(block.id, block.name, block.input));
  }
  const res: ChatResponse = { text, toolCalls: calls, usage: fromAnthropicUsage(message.usage) };
  if (message.stop_reason) res.stopReason = message.stop_reason;
  return applySchemaTool(res, schemaTool);
}

function mergeUsage(into: RawUsage, from: RawUsage | null | undefined): void {
  for (const k of USAGE_FIELDS) {
    const v = from?.[k];
    if (typeof v === 'number') into[k] = v;
  }
}

type Block = { kind: 'text'; text: string } | { kind: 'tool'; id: string; name: string; json: string };

/** Merges Messages stream events into one response. */
export class AnthropicStreamAccumulator {
  private readonly blocks = new Map<number, Block>();
  private readonly usage: RawUsage = {};
  private stopReason: string | undefined;
  private stopped = false;

  constructor(private readonly schemaTool?: SchemaTool) {}

  /** Adds one event; returns its text fragment, if any, for progress callbacks. */
  push(event: RawMessageStreamEvent): string | undefined {
    switch (event.type) {
      case 'message_start':
        mergeUsage(this.usage, event.message.usage);
        return undefined;
      case 'content_block_start': {
        const b = event.content_block;
        if (b.type === 'text') {
          this.blocks.set(event.index, { kind: 'text', text: b.text ?? '' });
          return b.text || undefined;
        }
        if (b.type === 'tool_use')
          this.blocks.set(event.index, { kind: 'tool', id: b.id, name: b.name, json: '' });
        return undefined;
      }
      case 'content_block_delta': {
        const block = this.blocks.get(event.index);
        const d = event.delta;
        if (d.type === 'text_delta' && block?.kind === 'text') {
          block.text += d.text;
          return d.text || undefined;
        }
        if (d.type === 'input_json_delta' && block?.kind === 'tool') {
          block.json += d.partial_json;
          // The structured answer is the tool input itself, so its JSON is the visible progress.
          const st = this.schemaTool;
          if (st && !st.wrapped && block.name === st.name) return d.partial_json || undefined;
        }
        return undefined;
      }
      case 'message_delta':
        // Its counts are cumulative and win over message_start's; null ones were not reported again.
        mergeUsage(this.usage, event.usage);
        if (event.delta.stop_reason) this.stopReason = event.delta.stop_reason;
        return undefined;
      case 'message_stop':
        this.stopped = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** True once message_stop arrived; a stream that ends before that was cut off. */
  get finished(): boolean {
    return this.stopped;
  }

  /** The merged response. */
  finish(): ChatResponse {
    let text = '';
    const calls: ToolCall[] = [];
    for (const [, b] of [...this.blocks.entries()].sort(([a], [c]) => a - c)) {
      if (b.kind === 'text') text += b.text;
      else calls.push(parseToolArgs(b.id, b.name, b.json));
    }
    const res: ChatResponse = { text, toolCalls: calls, usage: fromAnthropicUsage(this.usage) };
    if (this.stopReason) res.stopReason = this.stopReason;
    return applySchemaTool(res, this.schemaTool);
  }
}
