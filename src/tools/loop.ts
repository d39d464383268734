import { formatError, HatcheryError, isAbortError, throwIfAborted } from '../core/errors.js';
import type { NodeResult } from '../engine/contracts.js';
import type { Scope } from '../engine/scope.js';
import type { ChatMessage, ChatRequest, Provider, ToolSpec, Usage } from '../providers/types.js';
import { addUsage } from '../providers/types.js';
import type { ToolRef } from './refs.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

/** Default number of model turns in a tool-use loop. */
export const DEFAULT_MAX_TURNS = 10;

/** Cuts a tool result to `limit` characters, saying so, so one huge result cannot flood the context. */
export function capResult(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[result cut: ${text.length - limit} of ${text.length} characters omitted; the node's tool_output_limit sets the cap]`;
}

/** A result whose only content is structured also gets it as JSON text, so models and banelings see it. */
function withText(res: ToolResult): ToolResult {
  if (res.text || res.structured === undefined) return res;
  return { ...res, text: JSON.stringify(res.structured) ?? '' };
}

/**
 * Calls one tool with a timeout. Exceptions propagate (banelings fail on them); the tool-use loop
 * turns them into error results instead.
 */
export async function callTool(
  scope: Scope,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  timeoutMs?: number,
): Promise<ToolResult> {
  const shared = scope.shared;
  const ms = timeoutMs ?? shared.runtime.tools.toolTimeoutMs;
  const t0 = shared.emit ? performance.now() : 0;
  let isError = true;
  try {
    const res = tool.instant
      ? await tool.call(args, { scope, signal: scope.signal, node })
      : await guarded(scope, node, tool, args, ms);
    isError = res.isError === true;
    return withText(res);
  } finally {
    shared.emit?.({
      type: 'tool_call',
      runId: shared.runId,
      hatchery: scope.hatchery.name,
      node,
      tool: tool.name,
      depth: scope.depth,
      ms: performance.now() - t0,
      isError,
    });
  }
}

/**
 * Runs a tool call that may wait on I/O: it ends at the timeout or when the run is cancelled, even
 * if the tool ignores its signal. The tool's own AbortController is only built when the tool reads
 * `signal`, since most of the cost of a fast call would otherwise be that controller.
 */
function guarded(
  scope: Scope,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  ms: number,
): Promise<ToolResult> {
  throwIfAborted(scope.signal);
  return new Promise<ToolResult>((resolve, reject) => {
    let ctrl: AbortController | undefined;
    let done = false;
    const stop = (err: HatcheryError) => {
      if (done) return;
      finish();
      ctrl?.abort(err);
      reject(err);
    };
    const onAbort = () => {
      const r = scope.signal.reason;
      stop(
        r instanceof HatcheryError
          ? r
          : new HatcheryError('ABORTED', 'the run was cancelled', {}, { cause: r }),
      );
    };
    const timer = setTimeout(
      () =>
        stop(
          new HatcheryError('TIMEOUT', `tool "${tool.name}" timed out after ${ms} ms`, {
            node,
            tool: tool.ref,
          }),
        ),
      ms,
    );
    timer.unref?.();
    scope.signal.addEventListener('abort', onAbort, { once: true });
    function finish() {
      done = true;
      clearTimeout(timer);
      scope.signal.removeEventListener('abort', onAbort);
    }
    const tc: ToolContext = {
      scope,
      node,
      get signal() {
        ctrl ??= new AbortController();
        return ctrl.signal;
      },
    };
    let call: Promise<ToolResult>;
    try {
      call = tool.call(args, tc);
    } catch (err) {
      finish();
      reject(err);
      return;
    }
    call.then(
      (res) => {
        if (done) return;
        finish();
        resolve(res);
      },
      (err: unknown) => {
        if (done) return;
        finish();
        reject(err);
      },
    );
  });
}

/** Resolves a baneling's reference to exactly one tool and calls it. */
export async function callToolRef(
  scope: Scope,
  node: string,
  ref: ToolRef,
  args: Record<string, unknown>,
  timeoutMs?: number,
): Promise<ToolResult> {
  const tools = await scope.shared.runtime.tools.resolve(ref, scope);
  const tool = tools[0];
  if (tools.length !== 1 || !tool) {
    throw new HatcheryError(
      'UNKNOWN_TOOL',
      `"${ref.ref}" stands for ${tools.length} tools; a baneling calls one: name it as mcp:<server>/<tool>`,
      { field: 'tool_name' },
    );
  }
  return callTool(scope, node, tool, args, timeoutMs);
}

/** What a tool-use loop ends with: the final answer and the whole conversation (for reuse). */
export interface LoopResult extends NodeResult {
  usage: Usage;
  messages: ChatMessage[];
}

/** Options of one tool-use loop. */
export interface ToolLoopOptions {
  node: string;
  provider: Provider;
  /** The first request (system prompt, user message, sampling options). */
  request: ChatRequest;
  refs: readonly ToolRef[];
  maxTurns?: number;
  /** Extra tools (spawn_agent, route choice...) offered beside the references. */
  extraTools?: readonly Tool[];
  /** Cap of each tool result in characters (the node's tool_output_limit); default the runtime's. */
  resultLimit?: number;
}

/** Resolves a drone's references into tools; two tools under one name is an error. */
export async function resolveTools(
  scope: Scope,
  node: string,
  refs: readonly ToolRef[],
  extra: readonly Tool[] = [],
) {
  const lists = await Promise.all(refs.map((r) => scope.shared.runtime.tools.resolve(r, scope)));
  const byName = new Map<string, Tool>();
  for (const tool of [...lists.flat(), ...extra]) {
    const prev = byName.get(tool.name);
    if (prev) {
      throw new HatcheryError(
        'TOOL',
        `two tools named "${tool.name}" (${prev.ref} and ${tool.ref}); the model could not tell them apart: offer only one`,
        { node, field: 'tools' },
      );
    }
    byName.set(tool.name, tool);
  }
  return byName;
}

/**
 * The tool-use loop: call the model, run every tool call it asks for concurrently, feed the results
 * back, until it answers without a tool call. Tool failures become error results the model sees.
 */
export async function toolLoop(scope: Scope, opts: ToolLoopOptions): Promise<LoopResult> {
  const { node, provider } = opts;
  const tools = await resolveTools(scope, node, opts.refs, opts.extraTools);
  const specs: ToolSpec[] = [...tools.values()].map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
  }));
  const messages: ChatMessage[] = [...opts.request.messages];
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  const maxTurns = opts.maxTurns ?? DEFAULT_MAX_TURNS;
  const limit = opts.resultLimit ?? scope.shared.runtime.tools.resultLimit;
  for (let turn = 1; turn <= maxTurns; turn++) {
    throwIfAborted(scope.signal);
    const res = await provider.chat({ ...opts.request, messages, tools: specs });
    addUsage(usage, res.usage);
    if (res.toolCalls.length === 0) {
      messages.push({ role: 'assistant', content: res.text });
      return { text: res.text, usage, messages };
    }
    messages.push({ role: 'assistant', content: res.text, toolCalls: res.toolCalls });
    const results = await Promise.all(
      res.toolCalls.map(async (call): Promise<ChatMessage> => {
        const reply = (content: string, isError: boolean): ChatMessage => ({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          content: capResult(content, limit),
          isError,
        });
        const tool = tools.get(call.name);
        if (!tool) {
          return reply(`unknown tool "${call.name}"; available tools: ${[...tools.keys()].join(', ')}`, true);
        }
        if (call.argsError) return reply(`invalid arguments for ${call.name}: ${call.argsError}`, true);
        try {
          const r = await callTool(scope, node, tool, call.args);
          return reply(r.text, r.isError === true);
        } catch (err) {
          // Cancellation of the run ends the loop; every other failure is the model's to handle.
          if (scope.signal.aborted || (isAbortError(err) && !(err instanceof HatcheryError))) throw err;
          return reply(`error: ${formatError(err)}`, true);
        }
      }),
    );
    messages.push(...results);
  }
  throw new HatcheryError(
    'MAX_TURNS',
    `the model still asked for tools after max_turns (${maxTurns}) turns; raise max_turns or make the prompt say when to stop`,
    { node, field: 'max_turns' },
  );
}
