import {
  type CreateMessageRequest,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  type SamplingMessage,
  SdkErrorCode,
} from '@modelcontextprotocol/server';
import { HatcheryError, isAbortError } from '../core/errors.js';
import type { ChatMessage, ChatRequest, ChatResponse, Provider, ToolCall } from './types.js';
import { KEY_VARS_TEXT, VENDORS } from './vendors.js';

/** Parameters of one `sampling/createMessage` request. */
export type SamplingParams = CreateMessageRequest['params'];

/** Sends one sampling request to the MCP client (usually `server.createMessage` bound to a request). */
export type CreateMessageFn = (
  params: SamplingParams,
  options: { signal: AbortSignal; timeout: number },
) => Promise<CreateMessageResult | CreateMessageResultWithTools>;

/** Options of the sampling provider. */
export interface SamplingProviderOptions {
  /** Sends the request to the client. */
  createMessage: CreateMessageFn;
  /** The client declared `sampling.tools`, so drones with tools can use its model. */
  supportsTools?: boolean;
  /** maxTokens when the node sets none (the field is mandatory in MCP). */
  defaultMaxTokens?: number;
  /** Timeout of one sampling request when the node sets none; a person may have to approve it. */
  defaultTimeoutMs?: number;
}

/** Default `maxTokens` of sampling requests. */
const DEFAULT_SAMPLING_MAX_TOKENS = 4096;
/** Default timeout of a sampling request: generous, since clients may ask the user first. */
const DEFAULT_SAMPLING_TIMEOUT_MS = 300_000;

type Block = Exclude<SamplingMessage['content'], unknown[]>;

/** Turns the vendor-neutral conversation into MCP sampling messages; tool results merge into one user turn. */
export function toSamplingMessages(messages: readonly ChatMessage[]): SamplingMessage[] {
  const out: SamplingMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      out.push({ role: 'user', content: { type: 'text', text: m.content } });
    } else if (m.role === 'assistant') {
      const blocks: Block[] = [];
      if (m.content) blocks.push({ type: 'text', text: m.content });
      for (const c of m.toolCalls ?? [])
        blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
      out.push({
        role: 'assistant',
        content: blocks.length === 1 ? blocks[0]! : blocks.length ? blocks : { type: 'text', text: '' },
      });
    } else {
      const block: Block = {
        type: 'tool_result',
        toolUseId: m.toolCallId,
        content: [{ type: 'text', text: m.content }],
        ...(m.isError ? { isError: true } : {}),
      };
      const prev = out[out.length - 1];
      // MCP wants every result of one assistant turn in the single user message that follows it.
      if (
        prev &&
        prev.role === 'user' &&
        Array.isArray(prev.content) &&
        prev.content[0]?.type === 'tool_result'
      ) {
        prev.content.push(block);
      } else {
        out.push({ role: 'user', content: [block] });
      }
    }
  }
  return out;
}

/** The sampling parameters of a chat request (throws when it needs tools the client cannot run). */
export function toSamplingParams(request: ChatRequest, options: SamplingProviderOptions): SamplingParams {
  let system = request.system;
  if (request.responseSchema) {
    // Sampling has no structured-output mode: ask for the JSON in words; the drone validates the reply.
    system += `\n\nReply with only a JSON value (no prose, no code fence) matching this JSON Schema:\n${JSON.stringify(request.responseSchema.schema)}`;
  }
  const params: SamplingParams = {
    messages: toSamplingMessages(request.messages),
    systemPrompt: system,
    maxTokens: request.maxTokens ?? options.defaultMaxTokens ?? DEFAULT_SAMPLING_MAX_TOKENS,
    includeContext: 'none',
  };
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.model) params.modelPreferences = { hints: [{ name: request.model }] };
  if (request.tools && request.tools.length > 0) {
    if (!options.supportsTools) {
      throw new HatcheryError(
        'PROVIDER',
        `this drone offers tools to its model, but the MCP client's model (sampling) does not support tool use (the client declares no sampling.tools capability); set ${KEY_VARS_TEXT} and give the node an ${VENDORS.map((v) => `${v.id}:`).join(' or ')} model`,
        { field: 'model' },
      );
    }
    params.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object'; [k: string]: unknown },
    }));
    const choice = request.toolChoice;
    // MCP cannot force one named tool; "required" is the closest it offers.
    params.toolChoice = { mode: choice === undefined || choice === 'auto' ? 'auto' : 'required' };
  }
  return params;
}

/** Reads text and tool calls out of a sampling result. */
function fromSamplingResult(result: CreateMessageResult | CreateMessageResultWithTools): ChatResponse {
  const blocks = (Array.isArray(result.content) ? result.content : [result.content]) as Block[];
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const b of blocks) {
    if (b.type === 'text') text += b.text;
    else if (b.type === 'tool_use') toolCalls.push({ id: b.id, name: b.name, args: b.input ?? {} });
  }
  const response: ChatResponse = { text, toolCalls, usage: { inputTokens: 0, outputTokens: 0 } };
  if (result.stopReason !== undefined) response.stopReason = result.stopReason;
  return response;
}

/**
 * The MCP client's model as a Provider: each chat call becomes one `sampling/createMessage`
 * request, cancelled with the run. Usage is unknown to the server, so it counts as zero.
 */
export function createSamplingProvider(options: SamplingProviderOptions): Provider {
  return {
    id: 'sampling',
    async chat(request: ChatRequest): Promise<ChatResponse> {
      const params = toSamplingParams(request, options);
      const timeout = request.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_SAMPLING_TIMEOUT_MS;
      let result: CreateMessageResult | CreateMessageResultWithTools;
      try {
        result = await options.createMessage(params, { signal: request.signal, timeout });
      } catch (err) {
        if (request.signal.aborted || isAbortError(err)) throw err;
        const msg = err instanceof Error ? err.message : String(err);
        // SDK v2 marks its request timeout with a string code (v1's McpError had -32001); matched by
        // value, since an error of another copy of the SDK fails instanceof.
        const code = (err as { code?: unknown }).code;
        if (code === SdkErrorCode.RequestTimeout || code === -32001) {
          throw new HatcheryError(
            'TIMEOUT',
            `the MCP client's model (sampling) did not answer within ${Math.round(timeout / 1000)} s`,
            { field: 'model' },
            { cause: err },
          );
        }
        throw new HatcheryError('PROVIDER', `the MCP client's model (sampling) failed: ${msg}`, {
          field: 'model',
        });
      }
      return fromSamplingResult(result);
    },
  };
}
