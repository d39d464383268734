import { throwIfAborted } from '../core/cancel.js';
import { formatError, HatcheryError, isAbortError } from '../core/errors.js';
import type { RunContext, Tool, ToolRef } from '../engine/contracts.js';
import type { ChatMessage, ChatRequest, Provider, ToolCall, ToolSpec, Usage } from '../providers/types.js';
import { addUsage, fullUsage } from '../providers/types.js';
import { callTool, capResult, resolveTools } from '../tools/invoke.js';

/** The tools of a conversation that offers none. */
const NO_TOOLS: ReadonlyMap<string, Tool> = new Map();

/** Default number of model turns in a tool-use loop. */
const DEFAULT_MAX_TURNS = 10;

/** What a conversation ends with: the final answer, its usage and the message list (for reuse). */
export interface Conversation {
  text: string;
  usage: Usage;
  /** The whole conversation, reply included. */
  messages: ChatMessage[];
}

/** Options of one conversation with a model. */
export interface ConverseOptions {
  node: string;
  /** A metered provider (engine/metered.ts). */
  provider: Provider;
  /** The first request (system prompt, user message, sampling options, signal). */
  request: ChatRequest;
  refs: readonly ToolRef[];
  maxTurns?: number;
  /** Extra tools (spawn_agent...) offered beside the references. */
  extraTools?: readonly Tool[];
  /**
   * The tool calls of one turn refused before any runs, by position: each refused call gets its text
   * as an error result (spawns past spawn.max_fanout). Undefined when all may run.
   */
  refuse?: (calls: readonly ToolCall[]) => (string | undefined)[] | undefined;
  /** Cap of each tool result in characters (the node's tool_output_limit); default the runtime's. */
  resultLimit?: number;
  /** Structured output asked of a reply without tools. */
  responseSchema?: ChatRequest['responseSchema'];
}

/**
 * One conversation of a drone or a spawned agent, the tool-use loop: call the model, run every tool
 * call it asks for concurrently, feed the results back, until it answers without a tool call. Tool
 * failures become error results the model sees. Without tools it is one model call.
 */
export async function converse(scope: RunContext, opts: ConverseOptions): Promise<Conversation> {
  const { node, provider } = opts;
  // Most drones offer no tools: nothing to resolve then.
  const offered = opts.refs.length > 0 || (opts.extraTools !== undefined && opts.extraTools.length > 0);
  const tools = offered ? await resolveTools(scope, node, opts.refs, opts.extraTools) : NO_TOOLS;
  // A request without tools says so by leaving them out (its cassette key stays as it was); only such
  // a reply may be asked for structured output (with tools, the drone asks for it afterwards).
  const fields =
    tools.size > 0
      ? {
          tools: [...tools.values()].map(
            (t): ToolSpec => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }),
          ),
        }
      : opts.responseSchema !== undefined
        ? { responseSchema: opts.responseSchema }
        : {};
  const messages: ChatMessage[] = [...opts.request.messages];
  const usage: Usage = fullUsage(0, 0);
  const maxTurns = opts.maxTurns ?? DEFAULT_MAX_TURNS;
  const limit = opts.resultLimit ?? scope.shared.services.resultLimit;
  for (let turn = 1; turn <= maxTurns; turn++) {
    throwIfAborted(scope.signal);
    const res = await provider.chat({ ...opts.request, messages, ...fields });
    addUsage(usage, res.usage);
    if (res.toolCalls.length === 0) {
      messages.push({ role: 'assistant', content: res.text });
      return { text: res.text, usage, messages };
    }
    messages.push({ role: 'assistant', content: res.text, toolCalls: res.toolCalls });
    const refused = opts.refuse?.(res.toolCalls);
    const results = await Promise.all(
      res.toolCalls.map(async (call, i): Promise<ChatMessage> => {
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
        const no = refused?.[i];
        if (no !== undefined) return reply(`error: ${no}`, true);
        try {
          const r = await callTool(scope, node, tool, call.args, { toolCallId: call.id });
          return reply(r.text, r.isError === true);
        } catch (err) {
          // Cancellation of the run ends the loop; every other failure is the model's to handle.
          if (scope.signal.aborted || (isAbortError(err) && !(err instanceof HatcheryError))) throw err;
          // A question nobody can answer now (an ask node in a hatch: or node: tool) suspends the run.
          if (err instanceof HatcheryError && err.code === 'INPUT_REQUIRED') throw err;
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
