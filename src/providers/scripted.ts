import { sleep, throwIfAborted } from '../core/cancel.js';
import { HatcheryError } from '../core/errors.js';
import type { ChatRequest, ChatResponse, Provider, ToolCall, Usage } from './types.js';

/** A scripted tool call; `id` defaults to `call_<callIndex>_<j>`. */
export type ScriptedToolCall = Omit<ToolCall, 'id'> & { id?: string };

/** One scripted reply: text, a partial response, or an Error to throw. */
export type ScriptedReply =
  | string
  | Error
  | (Omit<Partial<ChatResponse>, 'toolCalls'> & { toolCalls?: ScriptedToolCall[] });

/** Computes the reply of call number `callIndex` (0-based) from its request. */
export type ScriptedReplyFn = (
  request: ChatRequest,
  callIndex: number,
) => ScriptedReply | ScriptedReplyFn | Promise<ScriptedReply>;

/** The script: replies consumed in order (an entry may itself be a function), or one function for all calls. */
export type Script = readonly (ScriptedReply | ScriptedReplyFn)[] | ScriptedReplyFn;

/** Options of {@link ScriptedProvider}. */
export interface ScriptedProviderOptions {
  /** Simulated latency of every call; honours the request's AbortSignal. Default 0 (no timer at all). */
  delayMs?: number;
  /** Usage of replies that set none. Default one input and one output token. */
  usage?: Usage;
  /** Keep a copy of every request in `calls`. Default true; benchmarks may turn it off. */
  record?: boolean;
}

/** The options-object form: `{ reply }` or `{ replies }` plus options. */
export interface ScriptedProviderConfig extends ScriptedProviderOptions {
  reply?: ScriptedReplyFn;
  replies?: readonly (ScriptedReply | ScriptedReplyFn)[];
}

const DEFAULT_USAGE: Usage = { inputTokens: 1, outputTokens: 1 };

/** A provider that answers from a script and records every request; for tests and benchmarks. */
export class ScriptedProvider implements Provider {
  readonly id = 'scripted';
  /** Every request received, with its messages array copied so later appends by the caller don't show. */
  readonly calls: ChatRequest[] = [];
  private readonly script: Script;
  private readonly options: ScriptedProviderOptions;
  private count = 0;

  constructor(script: Script | ScriptedProviderConfig, options: ScriptedProviderOptions = {}) {
    if (typeof script === 'function' || Array.isArray(script)) {
      this.script = script as Script;
      this.options = options;
    } else {
      const { reply, replies, ...rest } = script as ScriptedProviderConfig;
      this.script = reply ?? replies ?? [];
      this.options = { ...rest, ...options };
    }
  }

  /** How many calls have been made (recorded or not). */
  get callCount(): number {
    return this.count;
  }

  /** Scripted replies not yet consumed (Infinity for the function form). */
  get remaining(): number {
    return typeof this.script === 'function' ? Number.POSITIVE_INFINITY : this.script.length - this.count;
  }

  /**
   * Not an async function: without a delay and with a ready reply, the answer is one resolved
   * promise (benchmarks measure the runtime around it). Every failure is still a rejection.
   */
  chat(request: ChatRequest): Promise<ChatResponse> {
    const index = this.count++;
    if (this.options.record !== false) this.calls.push({ ...request, messages: [...request.messages] });
    try {
      // Checked first: throwIfAborted allocates its default context on every call.
      if (request.signal?.aborted) throwIfAborted(request.signal);
      if (this.options.delayMs && this.options.delayMs > 0) return this.delayed(request, index);
      const reply = this.replyOf(request, index);
      if (reply instanceof Promise) return reply.then((r) => this.toResponse(r, request, index));
      return Promise.resolve(this.toResponse(reply, request, index));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private async delayed(request: ChatRequest, index: number): Promise<ChatResponse> {
    await sleep(this.options.delayMs!, request.signal);
    throwIfAborted(request.signal);
    const reply = this.replyOf(request, index);
    return this.toResponse(reply instanceof Promise ? await reply : reply, request, index);
  }

  /** The scripted reply of call `index`, functions resolved. */
  private replyOf(request: ChatRequest, index: number): ScriptedReply | Promise<ScriptedReply> {
    let reply: ScriptedReply | ScriptedReplyFn | Promise<ScriptedReply> | undefined;
    if (typeof this.script === 'function') {
      reply = this.script(request, index);
    } else {
      reply = this.script[index];
      if (reply === undefined) {
        const last = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
        throw new HatcheryError(
          'PROVIDER',
          `scripted provider: no reply left for call #${index + 1} (the script has ${this.script.length}); last user message: ${JSON.stringify(last.slice(0, 120))}`,
          { callIndex: index },
        );
      }
    }
    // Entries may be functions returning functions (helpers composing replies); resolve them all.
    while (typeof reply === 'function') reply = reply(request, index);
    return reply;
  }

  private toResponse(reply: ScriptedReply, request: ChatRequest, index: number): ChatResponse {
    if (reply instanceof Error) throw reply;
    const usage = this.options.usage ?? DEFAULT_USAGE;
    let res: ChatResponse;
    if (typeof reply === 'string') {
      res = { text: reply, toolCalls: [], usage: { ...usage } };
    } else {
      res = {
        text: reply.text ?? '',
        toolCalls: (reply.toolCalls ?? []).map((c, j) => ({
          ...c,
          id: c.id ?? `call_${index}_${j}`,
          args: c.args ?? {},
        })),
        usage: { ...(reply.usage ?? usage) },
      };
      if (reply.stopReason !== undefined) res.stopReason = reply.stopReason;
    }
    if (request.stream && res.text) request.onDelta?.(res.text);
    return res;
  }
}
