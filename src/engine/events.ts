/**
 * The events of a run and where each sits in the run tree: what the CLI, traces, MCP progress and the
 * run journal listen to. Re-exported by contracts.ts, the module the layers import them from.
 */
import type { TraceContext } from '../core/trace.js';
import type { ChatRequest, Usage } from '../providers/types.js';

/**
 * Where an event sits in the run tree, so a listener can draw it without guessing from the order:
 * `parent` is the step of the node execution that holds this one (a parallel or map node for its
 * branches, the calling node for a nested run), `call` the tool call it runs under (hatch:, node:,
 * spawn_agent). Both are absent at the top of the top-level run.
 */
export interface EventPlace {
  /** Step of the enclosing node execution. */
  parent?: number;
  /** Id of the enclosing tool call (see tool_start). */
  call?: number;
  /** The map item (0-based) whose branch this runs in, for nodes of a map item's chain. */
  item?: number;
}

/** The run an event belongs to: what every event carries. */
interface RunEventBase {
  runId: string;
  hatchery: string;
  depth: number;
}

/** A node execution's event: its run, the node and its step. */
interface NodeEventBase extends RunEventBase {
  node: string;
  /** Number of this node execution in the run tree: unique, the id other events refer to. */
  step: number;
}

/** Where a model call happens and to which model: the fields model_call and model_retry share. */
export interface ModelEventBase extends NodeEventBase {
  /** The spawn_agent tool call whose agent made it, for spawned agents. */
  call?: number;
  vendor: string;
  model: string;
}

/**
 * EventTime: node_start, node_end and model_call carry `ts`, the performance.now() reading their
 * emitter took anyway (a node's start, its end, a call's end), so a listener that timestamps events
 * (the run journal) reads no clock of its own per event. Other events have none.
 *
 * Events of a run, for the CLI, traces, MCP progress and the run journal. `depth` > 0 marks nested runs.
 */
export type RunEvent =
  | ({
      type: 'run_start';
      /** Absolute path of the file ('' for definitions built in memory). */
      file: string;
      /** The run's input and declared inputs (nested runs: what the hatch: tool passed). */
      input?: string;
      vars?: Readonly<Record<string, string>>;
      /** The caller's trace context (an MCP client's `_meta.traceparent`), top-level runs only. */
      trace?: TraceContext;
    } & RunEventBase &
      EventPlace)
  | ({
      type: 'node_start';
      kind: string;
      /** When it happened, as performance.now() (see EventTime). */
      ts?: number;
    } & NodeEventBase &
      EventPlace)
  | ({
      type: 'node_end';
      output: string;
      /** The structured value (output_schema), when the node has one. */
      value?: unknown;
      usage?: Usage;
      ms: number;
      /** The scope path and sequence number of this execution (see RunContext.path), for resume. */
      path?: string;
      seq: number;
      /** The routing decision: the node that runs next in this scope, or null when the chain ends. */
      next: string | null;
      /** The node's own successor choice (route: choose), kept so a resumed run routes the same way. */
      chose?: string | null;
      /** True when a resumed run took this result from its journal instead of running the node. */
      replayed?: boolean;
      /** When it happened, as performance.now() (see EventTime). */
      ts?: number;
    } & NodeEventBase &
      EventPlace)
  | ({
      /** A node execution that threw: the run (or its branch) fails with `error` unless something catches it. */
      type: 'node_error';
      error: string;
      code?: string;
      ms: number;
    } & NodeEventBase &
      EventPlace)
  | ({
      type: 'model_call';
      /**
       * The request as sent (its message list copied, never redacted here): a journal hashes it into
       * the cassette key, so it can answer the same call again. Listeners must not change it.
       */
      request: ChatRequest;
      /** The answer (undefined when the call failed). */
      text?: string;
      toolCalls?: readonly { id: string; name: string; args: Record<string, unknown> }[];
      stopReason?: string;
      usage?: Usage;
      error?: string;
      /** The failure's error code (PROVIDER, ABORTED...), when the call failed with one. */
      code?: string;
      /** Attempts that failed and were retried before this outcome. */
      retries?: number;
      /** What this model stands in for (`client_fallback`: the MCP client's model was unavailable). */
      standIn?: string;
      ms: number;
      /** When it happened, as performance.now() (see EventTime). */
      ts?: number;
    } & ModelEventBase)
  | ({
      /** A model call failed and is retried after `waitMs` (rate limit, overload, connection). */
      type: 'model_retry';
      /** 1 for the first retry. */
      attempt: number;
      waitMs: number;
      /** The failure being retried (status and message). */
      reason: string;
      /** True when the server asked for the wait (429, retry-after). */
      rateLimited: boolean;
    } & ModelEventBase)
  | ({
      /** A tool call begins (emitted only while someone listens); its step is the calling node's. */
      type: 'tool_start';
      /** Id of this call, unique in the run tree; the matching tool_call and nested events carry it. */
      call: number;
      /** The enclosing spawn_agent call, when a spawned agent makes this call. */
      parentCall?: number;
      /** The model's id of the call, when a drone's model asked for it. */
      toolCallId?: string;
      tool: string;
      ref?: string;
      args?: Record<string, unknown>;
      /**
       * Set by a listener that traces the call (OpenTelemetry): the context this call passes to the MCP
       * server it calls instead of the run's. The one field of an event a listener may write.
       */
      trace?: TraceContext;
    } & NodeEventBase)
  | ({
      type: 'tool_call';
      node: string;
      tool: string;
      ms: number;
      isError: boolean;
      /** Step of the calling node and the id of the call (see tool_start); absent in journals before them. */
      step?: number;
      call?: number;
      parentCall?: number;
      /** The tool's reference (`mcp:server`, `http_request`...): with name and args, its cassette key. */
      ref?: string;
      args?: Record<string, unknown>;
      /** The result text, or the error message when the call threw. */
      result?: string;
      /** The call's idempotency key (ToolResult.key): a resumed run answers a call of this key from here. */
      key?: string;
    } & RunEventBase)
  | ({
      type: 'run_end';
      ok: boolean;
      output?: string;
      error?: string;
      /** The failure's error code (INPUT_REQUIRED, BUDGET_EXHAUSTED, ABORTED...). */
      code?: string;
      usage: Usage;
      steps: number;
      ms: number;
    } & RunEventBase &
      EventPlace);

/** Receives run events. Listeners must not throw; errors they raise are ignored. */
export type RunListener = (event: RunEvent) => void;
