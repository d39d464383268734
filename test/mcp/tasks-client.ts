/**
 * A client of the MCP tasks extension written from its specification (ext-tasks,
 * specification/draft/tasks.md) and the 2026-07-28 transport, not from the server's code: raw
 * JSON-RPC POSTs carrying the per-request `_meta` envelope (protocol version, client info, client
 * capabilities) and the routing headers (Mcp-Method, and Mcp-Name = the tool name or the taskId).
 * It reads JSON and SSE responses alike. `fetch` may be a real one (a URL of a server process) or
 * an in-process handler's.
 */

/** The extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The protocol revision the client speaks. */
export const PROTOCOL_VERSION = '2026-07-28';

/** A JSON-RPC error as the server sent it. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The answer to one request: its result or its error, and the HTTP status it came with. */
export interface RpcReply {
  status: number;
  result?: Record<string, unknown>;
  error?: RpcError;
}

/** The Task of the specification, with the payload of its status. */
export interface WireTask {
  resultType?: string;
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  result?: Record<string, unknown>;
  error?: RpcError;
}

/** Options of the client. */
export interface TasksClientOptions {
  /** The MCP endpoint, e.g. http://127.0.0.1:PORT/mcp. */
  url: string;
  /** Sends a request (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Bearer token, when the server demands one. */
  token?: string;
  /** Declare the tasks extension in every request's client capabilities (default true). */
  declare?: boolean;
  /** Other client capabilities to declare (e.g. `elicitation: {}` for multi round-trip forms). */
  capabilities?: Record<string, unknown>;
}

/** Parses an SSE body into the JSON of its `data:` events. */
function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data) out.push(JSON.parse(data));
  }
  return out;
}

/** A tasks-extension client over Streamable HTTP (2026-07-28, stateless). */
export class TasksClient {
  private nextId = 1;
  private readonly send: (request: Request) => Promise<Response>;

  constructor(private readonly options: TasksClientOptions) {
    this.send = options.fetch ?? ((r) => fetch(r));
  }

  /** Sends one request; `declare` overrides whether this request declares the extension. */
  async request(
    method: string,
    params: Record<string, unknown> = {},
    opts: { declare?: boolean; headers?: Record<string, string> } = {},
  ): Promise<RpcReply> {
    const declare = opts.declare ?? this.options.declare ?? true;
    const id = this.nextId++;
    const body = {
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'tasks-spec-client', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {
            ...this.options.capabilities,
            ...(declare ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
          },
        },
      },
    };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': method,
    };
    // Routing headers (SEP-2243): tasks/* name the task, tools/call the tool.
    const name = method.startsWith('tasks/')
      ? params.taskId
      : method === 'tools/call'
        ? params.name
        : undefined;
    if (typeof name === 'string') headers['mcp-name'] = name;
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    const res = await this.send(
      new Request(this.options.url, {
        method: 'POST',
        headers: { ...headers, ...opts.headers },
        body: JSON.stringify(body),
      }),
    );
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const messages = type.includes('text/event-stream') ? sseMessages(text) : text ? [JSON.parse(text)] : [];
    type Message = { id?: unknown; result?: Record<string, unknown>; error?: RpcError };
    const all = messages.filter((m): m is Message => typeof m === 'object' && m !== null);
    // An error the transport answers before reading the request may carry no id.
    const reply = all.find((m) => m.id === id) ?? all.find((m) => m.error !== undefined);
    return {
      status: res.status,
      ...(reply?.result ? { result: reply.result } : {}),
      ...(reply?.error ? { error: reply.error } : {}),
    };
  }

  /** The result of a request; throws with the JSON-RPC error's code and message. */
  async ok(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const r = await this.request(method, params);
    if (r.error)
      throw Object.assign(new Error(`${method}: ${r.error.code} ${r.error.message}`), { rpc: r.error });
    if (!r.result) throw new Error(`${method}: HTTP ${r.status} without a result`);
    return r.result;
  }

  /** server/discover: the server's capabilities. */
  async discover(): Promise<Record<string, unknown>> {
    return this.ok('server/discover');
  }

  /** tools/call: a CallToolResult, or a CreateTaskResult (resultType "task"). */
  async callTool(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.ok('tools/call', { name, arguments: args });
  }

  /** tasks/get. */
  async getTask(taskId: string): Promise<WireTask> {
    return (await this.ok('tasks/get', { taskId })) as unknown as WireTask;
  }

  /** tasks/update with responses keyed like the task's inputRequests. */
  async updateTask(
    taskId: string,
    inputResponses: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    return this.ok('tasks/update', { taskId, inputResponses });
  }

  /** tasks/cancel. */
  async cancelTask(taskId: string): Promise<Record<string, unknown>> {
    return this.ok('tasks/cancel', { taskId });
  }

  /**
   * Polls tasks/get until the task is in one of `statuses` (or any terminal one), at `everyMs` (the
   * tests' own pace; a real client honours pollIntervalMs), for at most `timeoutMs`.
   */
  async poll(
    taskId: string,
    statuses: readonly WireTask['status'][] = ['completed', 'failed', 'cancelled'],
    timeoutMs = 20_000,
    everyMs = 50,
  ): Promise<WireTask> {
    const t0 = Date.now();
    for (;;) {
      const task = await this.getTask(taskId);
      if (statuses.includes(task.status) || ['completed', 'failed', 'cancelled'].includes(task.status))
        return task;
      if (Date.now() - t0 > timeoutMs)
        throw new Error(
          `task ${taskId} still ${task.status} after ${timeoutMs} ms: ${task.statusMessage ?? ''}`,
        );
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
