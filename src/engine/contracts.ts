/**
 * The contracts the layers meet at. Node kinds and tools are written against these interfaces; the
 * runtime (the composition root) implements them. Nothing here imports a layer above engine/.
 */
import type { ErrorContext, ValidationProblem } from '../core/errors.js';
import type { PathGuard } from '../core/fs/paths.js';
import type { TraceContext } from '../core/trace.js';
import type { Endpoint, ResolvedModel } from '../providers/resolve.js';
import type { ChatMessage, Provider, Usage } from '../providers/types.js';
import type { HatcheryDef, McpServerDef } from '../schema/hatchery.js';
import type { NodeKind } from '../schema/nodes.js';
import type { RunEvent, RunListener } from './events.js';
import type { HatcheryGraph } from './graph.js';
import type { LoadOptions } from './load-options.js';
import type { Template, TemplateVars } from './templates/templates.js';

export type { EventPlace, ModelEventBase, RunEvent, RunListener } from './events.js';
export type { LoadOptions, LoadRoots } from './load-options.js';
export type { Template, TemplateVars };

/** Where a node goes next, compiled once at load time. */
export type Router =
  | { kind: 'end' }
  | { kind: 'one'; target: string }
  | { kind: 'list'; targets: readonly string[]; tests: readonly RegExp[]; fallback: string };

/** What a node produced. */
export interface NodeResult {
  /** The output text (what `next` routing, `save_output` and the final result use). */
  text: string;
  /** A structured value (parsed JSON of an output_schema); templates see it as `out.<node>`. */
  value?: unknown;
  usage?: Usage;
  /** The successor the node chose itself (supervisor routing); null ends the run. */
  next?: string | null;
}

/** A node ready to run: validated, templates compiled, routing compiled. */
export interface CompiledNode {
  readonly name: string;
  readonly kind: NodeKind | string;
  /** Position in the file's `nodes` array (for error paths). */
  readonly index: number;
  readonly route: Router;
  readonly saveOutput?: string;
  readonly writeOutput?: Template;
  readonly maxVisits?: number;
  readonly onLimit?: string;
  /**
   * The node of a fixed `next` (one target, not a list): set by the loader once every node is
   * compiled, so the walk steps to it without a lookup by name (in a large file the map's lookup is a
   * cache miss per step). Undefined for any other route; a node's own choice (route: choose, on_limit)
   * still goes by name. Derived from the immutable hatchery, so every run shares it.
   */
  successor?: CompiledNode | undefined;
  /** Checks done once per run before any node runs (e.g. API keys of drones). */
  readonly preflight?: (scope: RunContext) => void;
  /** Runs the node in a scope. */
  readonly exec: (scope: RunContext) => Promise<NodeResult>;
}

/** A loaded, validated, compiled hatchery file; immutable, shared by all its runs. */
export interface Hatchery {
  readonly name: string;
  readonly desc: string;
  /** Absolute path of the file ('' for definitions built in memory). */
  readonly file: string;
  /** Folder the file's relative paths resolve against. */
  readonly dir: string;
  readonly start: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly files: Readonly<Record<string, string>>;
  readonly model?: string;
  readonly maxSteps?: number;
  readonly maxDepth?: number;
  readonly nodes: ReadonlyMap<string, CompiledNode>;
  /** The definition as validated (aliases normalised), for display and MCP resources. */
  readonly def: HatcheryDef;
  /** JSON Schema of the structured result: the output_schema of the one node where runs end, if any. */
  readonly outputSchema?: Record<string, unknown>;
  /** The top-level `output` template: the run's result, rendered when it ends (else the last node's output). */
  readonly output?: Template;
  /** Files this hatchery depends on (hatch: targets, files entries), for hot reload. */
  readonly dependencies: readonly string[];
  /** Problems that do not stop the file from loading (severity `warning`), for `validate` and logs. */
  readonly warnings: readonly ValidationProblem[];
  /** True when a run cannot do without `input`: a template on a path from start reads ctx.input without a default. */
  readonly inputRequired: boolean;
}

/** A parsed tool reference, as written in a drone's `tools` or a baneling's `tool_name`. */
export type ToolRef =
  | { kind: 'builtin'; ref: string; name: string }
  | { kind: 'hatch'; ref: string; path: string }
  | { kind: 'node'; ref: string; node: string }
  | { kind: 'mcp'; ref: string; server: string; tool?: string }
  | { kind: 'a2a'; ref: string; agent: string; skill?: string }
  | { kind: 'js'; ref: string; module: string; export: string };

/** What a tool call may use: the calling run's context, the call's own cancellation, the calling node. */
export interface ToolContext {
  scope: RunContext;
  /** Ends when the call ends for any reason (timeout, cancellation, a failing sibling): anything the tool starts must stop with it. */
  signal: AbortSignal;
  /** Name of the node making the call (for error messages). */
  node: string;
  /** Id of this call in the run tree (see the tool_start event); set only while someone listens. */
  call?: number;
  /** Trace context to pass downstream instead of the run's (set by a tracing listener). */
  trace?: TraceContext;
}

/** A tool's answer. `isError` results are shown to the model as errors; the run goes on. */
export interface ToolResult {
  text: string;
  isError?: boolean;
  /** Structured content (MCP structuredContent, js: return values), kept beside the text. */
  structured?: unknown;
  /**
   * The call's idempotency key (an A2A message id), for a call that must not be made twice: the
   * journal keeps it, and a resumed run answers a call of the same key from there (NodeMemo.call).
   */
  key?: string;
}

/** Anything a drone can call or a baneling can run: built-ins, hatcheries, nodes, MCP tools, functions. */
export interface Tool {
  /** Name shown to the model; unique among the tools offered to one drone. */
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly inputSchema: Record<string, unknown>;
  /** The reference it came from, e.g. `hatch:sub.json` (for error messages). */
  readonly ref: string;
  /** Completes without I/O or waiting (echo): called without timeout and cancellation machinery. */
  readonly instant?: boolean;
  /** The tool's own timeout (an A2A agent's `timeout_ms`): used when the node sets none. */
  readonly timeoutMs?: number;
  call(args: Record<string, unknown>, tc: ToolContext): Promise<ToolResult>;
}

/** The operator's network opt-ins for http_request (--allow-host, --allow-private-network). */
export interface NetworkOptions {
  /** Hosts reachable although local or private: `name`, `name:port`, `[v6]:port`, `*.domain`. */
  allowHosts?: readonly string[];
  /** Every address is reachable: loopback, private, link-local. */
  allowPrivateNetwork?: boolean;
}

/** The services a run needs from the process that hosts it; the Runtime implements them. */
export interface RunServices {
  /**
   * Turns a node's `model` into a provider; throws a HatcheryError naming `where` when it cannot.
   * `fallback` (client_fallback) stands in for the client's model when `sampling` is undefined.
   * The answer depends only on the arguments and the runtime (its environment is read as fixed), so
   * a node may keep it for as long as the services and the sampling client are the same objects.
   */
  resolveModel(
    spec: string | undefined,
    baseURL: Endpoint | undefined,
    sampling: Provider | undefined,
    where: ErrorContext,
    fallback?: string,
  ): ResolvedModel;
  /** The tools a reference stands for (an mcp:<server> reference may stand for several). */
  resolveTools(ref: ToolRef, scope: RunContext): Promise<Tool[]>;
  /**
   * Runs a hatchery nested in the run of the tool call `tc` (hatch: tools), under that call; it ends
   * when the call does.
   */
  runHatchery(
    h: Hatchery,
    tc: ToolContext,
    input: string,
    vars: Readonly<Record<string, string>> | undefined,
  ): Promise<string>;
  /**
   * Runs the calling hatchery from `node` along its next chain in a child context of the tool call
   * `tc` (node: tools); it ends when the call does.
   */
  runFromNode(tc: ToolContext, node: string, input: string): Promise<string>;
  /** Default timeout of one tool call, in milliseconds. */
  readonly toolTimeoutMs: number;
  /** Default cap of a tool result shown to a model, in characters. */
  readonly resultLimit: number;
  /** Network opt-ins of http_request. */
  readonly network: NetworkOptions;
  /** Records or replays tool calls (run --record / --replay); undefined in ordinary runs. */
  readonly recorder?: CallRecorder;
}

/** Records tool calls to a cassette, or answers them from one (tools with network or side effects). */
export interface CallRecorder {
  /** True for the tools whose calls go through the cassette (MCP, http_request). */
  records(tool: Tool): boolean;
  /** Answers a call from the cassette, or makes it with `call` and records it. */
  tool(
    node: string,
    tool: Tool,
    args: Record<string, unknown>,
    call: () => Promise<ToolResult>,
  ): Promise<ToolResult>;
}

/** State shared by a top-level run and every run nested in it (hatch:, node:, branches). */
export interface RunState {
  readonly services: RunServices;
  readonly runId: string;
  /** The whole run's cancellation (a nested context's own signal may end sooner). */
  readonly signal: AbortSignal;
  readonly maxSteps: number;
  readonly maxDepth: number;
  /** Undefined when nobody listens, so no event object is ever built for nothing. */
  readonly emit: ((event: RunEvent) => void) | undefined;
  /** The MCP client's model, when the run came from a client that offers sampling. */
  readonly sampling: Provider | undefined;
  /** Node executions so far, across nested runs. */
  steps: number;
  /** Tool calls so far, across nested runs (their ids); counted only while someone listens. */
  calls: number;
  readonly usage: Usage;
  /** Budget and cost of the whole run tree (model calls, tool calls); one per top-level run. */
  readonly meter: RunMeter;
  /** Results of node executions a resumed run takes from its journal; undefined in fresh runs. */
  readonly memo: NodeMemo | undefined;
  /** Asks a person (ask nodes, approve: true); undefined: the run suspends with INPUT_REQUIRED. */
  readonly ask: AskFn | undefined;
  /** The run's trace context, passed on to the MCP servers its tools call; undefined when it has none. */
  readonly trace: TraceContext | undefined;
  /**
   * What the tool layer keeps for this run (the js: modules it looked at), made on first use: held
   * here rather than in a map keyed by run, so a call finds it without a lookup.
   */
  toolMemo: Map<object, unknown> | undefined;
  /** Checkpoints the run's side effects in a durable engine (--store postgres); undefined otherwise. */
  readonly durable: DurableSteps | undefined;
}

/**
 * The steps of a run on a durable engine: each model call, tool call and leaf node execution runs
 * through `step`, which stores what it returned; when the engine runs the run again after a crash, the
 * steps that finished return what they returned then, in the same order, without running again.
 */
export interface DurableSteps {
  /**
   * Runs `fn` as the run's next step, named `name`, or returns (or throws) what it did the first time.
   * Must be called in the same order on every execution of the run: never after an await whose
   * length varies, among calls started together.
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Counts spend into the step under way, which keeps it with its result: a step answered from its
   * checkpoint adds to the run's meter and step count what it spent the first time.
   */
  spent?(delta: SpendDelta): void;
  /** Takes the run's state once it is made: its meter reports spend here, and replayed spend goes back. */
  track?(state: RunState): void;
  /**
   * Wraps the run's listener when the engine runs the run again: events of the steps it answers from
   * the checkpoint (and of the nodes around them) were reported by the execution that ran them.
   */
  listen?(listener: RunListener): RunListener;
  /**
   * Tells a run the engine runs again what its journal holds (its records as read back), so that the
   * node executions whose records a crash lost are reported again.
   */
  recorded?(records: readonly Readonly<Record<string, unknown>>[]): void;
}

/** What part of a run spent: calls, tokens, cost and node executions (a durable step's, see DurableSteps.spent). */
export interface SpendDelta {
  tokens?: number;
  cost_usd?: number;
  model_calls?: number;
  tool_calls?: number;
  steps?: number;
}

/** Spend of a run tree against its budget and the price table; shared by nested runs, branches and agents. */
export interface RunMeter {
  /** Told of each spend as it is made (a durable engine keeps what each of its steps spent). */
  observer: ((delta: SpendDelta) => void) | undefined;
  /** Adds spend made earlier (a step a durable engine answers from its checkpoint), with no check. */
  add(delta: SpendDelta): void;
  /**
   * Throws BUDGET_EXHAUSTED (naming the limit and the spend) when no more model calls may start;
   * counts the call otherwise (a call that then fails still counts). The call's place comes as
   * strings, so that a call under no budget builds no object here.
   */
  beforeModelCall(file: string, node: string): void;
  /**
   * Adds a finished call's tokens and sets `usage.costUsd` when the model's price is known. Called
   * once per call that answered, before its usage is added anywhere else.
   */
  afterModelCall(vendor: string, model: string, usage: Usage): void;
  /**
   * Throws BUDGET_EXHAUSTED when no more tool calls may start; counts the call otherwise. Takes the
   * place of the call as strings: most runs have no budget, and their tool calls build no object here.
   */
  beforeToolCall(file: string, node: string, tool: string): void;
}

/** A finished node execution of an earlier attempt of this run, taken instead of running the node. */
export interface NodeMemo {
  /**
   * The recorded result of node `node` run as execution `seq` of the scope at `path`, or undefined
   * to run it (not recorded, not finished, changed since, or at/after the resume point).
   */
  take(path: string, seq: number, node: CompiledNode): NodeResult | undefined;
  /**
   * The result of a keyed tool call (ToolResult.key) an earlier attempt made and the journal holds,
   * or undefined to make it: a node cut short by a crash runs again, but its remote calls that
   * finished are not made twice.
   */
  call(key: string): ToolResult | undefined;
}

/** A question a run puts to a person: an ask node's, or an approval before a side effect. */
export interface AskRequest {
  kind: 'ask' | 'approve';
  /** Node asking. */
  node: string;
  /** The rendered question (for approvals: what will run, with its rendered arguments). */
  question: string;
  /** Allowed answers, when the question has a fixed set. */
  choices?: readonly string[];
  /** JSON Schema the answer must satisfy (it is then JSON text). */
  schema?: Record<string, unknown>;
}

/** Puts a question to a person and resolves with the answer; rejects when `signal` ends. */
export type AskFn = (question: AskRequest, signal: AbortSignal) => Promise<string>;

/** State one hatchery run shares with its child contexts (node: tools, branches, loops). */
export interface RunLocalState {
  /** Executions per node name (max_visits). */
  readonly visits: Map<string, number>;
  /** Message history of each drone that ran, for `conversation` reuse. */
  readonly conversations: Map<string, { system: string; messages: ChatMessage[] }>;
}

/**
 * How a child context differs from its parent: the fields of RunContext it sets (`signal` replaces
 * the parent's cancellation: a fan-out's, a tool call's), and `call`, the tool call it runs under
 * (its parentCall).
 */
export type ChildOptions = {
  -readonly [K in 'depth' | 'signal' | 'path' | 'agent' | 'item' | 'outUnread']?: RunContext[K];
} & { call?: number };

/** The context a node executes in: its variables, cancellation, file access and run-wide state. */
export interface RunContext {
  readonly hatchery: Hatchery;
  readonly shared: RunState;
  readonly local: RunLocalState;
  /** Where this run may read and write files. */
  readonly guard: PathGuard;
  readonly ctx: Record<string, unknown>;
  /** Outputs of the nodes so far, by name; written through setOut. */
  readonly out: Record<string, unknown>;
  /**
   * True in a fan-out's branch (parallel, map): its out is dropped when its walk ends, so the walk
   * skips the write of its last node's output (no node after it reads it; the fan-out's results do).
   */
  readonly outUnread: boolean;
  /** What templates see: ctx, out, fread. */
  readonly vars: TemplateVars;
  /** Cancellation of this context: the run's, or a narrower one (a fan-out's, a tool call's). */
  readonly signal: AbortSignal;
  /** Nesting level: 0 for the top-level run. */
  readonly depth: number;
  /**
   * Where this scope sits in the run, stable between attempts ('' for the top-level walk, branch
   * scopes `<parent path>/<seq>.<i>`); undefined where executions are not resumable one by one
   * (nested runs, node: tools, spawned agents): they run again inside the node that holds them.
   */
  readonly path: string | undefined;
  /** Node executions walked in this scope so far (the `seq` of the latest one). */
  seq: number;
  /** Step of the node executing in this scope (a child starts with its parent's), for event places. */
  step: number;
  /** Step of the loop node whose body this scope is walking, if any: its nodes' events sit under it. */
  bodyOf: number | undefined;
  /** Step of the node execution that made this scope (branches, nested runs); undefined at the top. */
  readonly parentStep: number | undefined;
  /** Tool call this scope runs under (hatch:, node:, spawn_agent), when someone listens. */
  readonly parentCall: number | undefined;
  /** True in a spawned agent's scope: its model and tool calls belong under parentCall. */
  readonly agent: boolean;
  /** The map item (0-based) this scope runs, in a map branch's scope. */
  readonly item: number | undefined;
  /** Output of the node that ran last here (a script's default stdin). */
  last: string;
  /** Renders a compiled template with this context's variables. */
  render(t: Template): string;
  /** Writes a `save_output` variable here and in every enclosing context of the same run. */
  save(key: string, value: unknown): void;
  /** Sets out.<name> in this context. */
  setOut(name: string, value: unknown): void;
  /** A child context: sees these variables, keeps its own writes; `signal` narrows its cancellation. */
  child(own?: Record<string, unknown>, opts?: ChildOptions): RunContext;
}

/** What a node kind's compiler can use and report to, for one node of one file. */
export interface CompileContext {
  readonly file: string;
  readonly dir: string;
  readonly def: HatcheryDef;
  /** The file's graph (node names, successors, paths back, conversation targets), analysed once per load. */
  readonly graph: HatcheryGraph;
  readonly options: LoadOptions;
  /** Servers visible to this file: --mcp-config entries overlaid by the file's own. */
  readonly mcpServers: Readonly<Record<string, McpServerDef>>;
  /** Compiles a template field; a syntax error is recorded as a problem and yields undefined. */
  template(source: string, field: string): Template | undefined;
  /** Records a problem at a field of the current node (`field` may be a sub-path like `tools/2`). */
  problem(field: string, message: string, fix?: string): void;
  /** Marks a file this hatchery depends on (watched for hot reload). */
  dependency(absPath: string): void;
  /**
   * Loads a hatch: sub-file (`rel` to this file's folder) at load time, passing each of its problems
   * to `report`; undefined when it is invalid, outside the roots, or already being loaded (a cycle).
   */
  hatchery?(rel: string, report: (message: string, fix?: string) => void): Hatchery | undefined;
}

/** The parts of a compiled node every kind shares; kinds add `exec` (and `preflight`). */
export type NodeBase = Omit<CompiledNode, 'exec' | 'preflight'>;

/**
 * One node kind's compiler: turns a validated definition into a runnable node. What other code reads
 * of a kind without compiling (child chains, hints, tool references) is its nodeKind() declaration in
 * schema/<kind>.ts: the first half of a load and the journal sit below the node kinds.
 */
export interface NodeKindImpl<D> {
  compile(def: D, base: NodeBase, cc: CompileContext): CompiledNode;
}
