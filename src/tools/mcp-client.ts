import {
  type CallToolRequest,
  Client,
  type ClientOptions,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type Transport,
} from '@modelcontextprotocol/client';
import { raceSignal } from '../core/cancel.js';
import { HatcheryError, isAbortError } from '../core/errors.js';
import { packageVersion } from '../core/package.js';
import { childEnv } from '../core/process/child-env.js';
import { secretRedactor } from '../core/secrets.js';
import type { Tool, ToolResult } from '../engine/contracts.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { cwdProblem } from './mcp-entry.js';
import { httpTransport, refusedError } from './mcp-http.js';
import { stdioTransport } from './mcp-stdio.js';

/** Parameters of one tools/call request. */
type CallToolParams = CallToolRequest['params'];

/** Default time a server gets to start and answer `initialize`. */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Characters of a server's stderr kept for error messages. */
const STDERR_TAIL = 2000;
/**
 * The last `max` characters of a server's stderr, redacted before the cut: cutting first could keep
 * half of a secret, which redaction would no longer recognise.
 */
function stderrTail(conn: { stderr: string }, max: number): string {
  return secretRedactor(process.env)(conn.stderr.trim()).slice(-max);
}
/** The SDK's own request timeout would cut calls at 60 s; the tool layer's signal is the real limit. */
const NO_SDK_TIMEOUT = 2_147_483_647;

/** Options of an McpPool. */
export interface McpPoolOptions {
  /** Time a server gets to start and initialize (default 30000 ms). */
  connectTimeoutMs?: number;
  /** Name and version this client announces. */
  clientInfo?: { name: string; version: string };
}

/** One server connection, possibly not (or no longer) open. */
interface Conn {
  readonly name: string;
  readonly def: McpServerDef;
  client?: Client;
  connecting?: Promise<Client>;
  /** Tools of the current connection; dropped with it. */
  tools?: Promise<Tool[]>;
  stderr: string;
}

/** A short description of a server definition for messages: its command line or URL. */
function describeServer(def: McpServerDef): string {
  if ('url' in def) return def.url;
  return [def.command, ...(def.args ?? [])]
    .map((a) => (/[\s"'\\]/.test(a) ? JSON.stringify(a) : a))
    .join(' ');
}

/** SDK errors that mean the connection is gone rather than that a request failed on it. */
const CONNECTION_LOST: ReadonlySet<string> = new Set([
  SdkErrorCode.ConnectionClosed,
  SdkErrorCode.NotConnected,
  SdkErrorCode.SendFailed,
]);

/** True when an error means the connection is gone (not that the server answered with an error). */
function isConnectionError(err: unknown): boolean {
  // The server answered: the connection is fine.
  if (err instanceof ProtocolError) return false;
  if (err instanceof SdkError) return CONNECTION_LOST.has(err.code);
  return !isAbortError(err);
}

/** True when an error is the SDK's code `code` (a timeout, a closed connection). */
function isSdkError(err: unknown, code: SdkErrorCode): boolean {
  return err instanceof SdkError && err.code === code;
}

/** Joins a CallToolResult's content into text; non-text parts are described in brackets. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const c of content as { type?: string; [k: string]: unknown }[]) {
    switch (c.type) {
      case 'text':
        parts.push(String(c.text ?? ''));
        break;
      case 'resource': {
        const r = (c.resource ?? {}) as { uri?: string; text?: string; mimeType?: string };
        parts.push(
          typeof r.text === 'string' ? r.text : `[resource ${r.uri ?? ''} (${r.mimeType ?? 'binary'})]`,
        );
        break;
      }
      case 'resource_link':
        parts.push(`[resource link: ${String(c.uri)}${c.name ? ` (${String(c.name)})` : ''}]`);
        break;
      default:
        parts.push(`[${String(c.type)} content${c.mimeType ? ` ${String(c.mimeType)}` : ''} omitted]`);
    }
  }
  return parts.join('\n');
}

/**
 * MCP client connections, one per server, opened on first use, shared by all runs of a Runtime,
 * reopened after a crash and closed by `close()`.
 */
export class McpPool {
  private readonly conns = new Map<string, Conn>();
  private closed = false;
  private readonly connectTimeoutMs: number;
  private readonly clientInfo: { name: string; version: string };

  constructor(options: McpPoolOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.clientInfo = options.clientInfo ?? { name: 'hatchery-mcp', version: packageVersion() };
  }

  /** Every tool of a server (connecting to it when needed). */
  async tools(name: string, def: McpServerDef, signal: AbortSignal): Promise<Tool[]> {
    const conn = this.conn(name, def);
    for (let attempt = 1; ; attempt++) {
      const client = await this.client(conn, signal);
      if (!conn.tools) {
        const listing = this.listTools(conn, client);
        conn.tools = listing;
        // A failed listing is not cached: the next run asks again.
        listing.catch(() => {
          if (conn.tools === listing) conn.tools = undefined;
        });
      }
      const tools = conn.tools;
      try {
        return await raceSignal(tools, signal);
      } catch (err) {
        // The connection died while listing: one more attempt on a fresh connection.
        if (attempt > 1 || conn.client === client || !isConnectionError(err) || signal.aborted) throw err;
      }
    }
  }

  /** One tool of a server, or UNKNOWN_TOOL listing the server's tools. */
  async tool(name: string, def: McpServerDef, toolName: string, signal: AbortSignal): Promise<Tool> {
    const tools = await this.tools(name, def, signal);
    const tool = tools.find((t) => t.name === toolName);
    if (!tool) {
      throw new HatcheryError(
        'UNKNOWN_TOOL',
        `MCP server "${name}" has no tool "${toolName}"; its tools: ${tools.map((t) => t.name).join(', ') || '(none)'}`,
        { server: name, tool: `mcp:${name}/${toolName}` },
      );
    }
    return tool;
  }

  /** Number of open connections (for tests and status). */
  get openConnections(): number {
    return [...this.conns.values()].filter((c) => c.client).length;
  }

  /** Closes every connection and stops every server process this pool started. */
  async close(): Promise<void> {
    this.closed = true;
    const conns = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(
      conns.map(async (c) => {
        const client = c.client ?? (await c.connecting?.catch(() => undefined));
        c.client = undefined;
        c.tools = undefined;
        await client?.close().catch(() => {});
      }),
    );
  }

  private conn(name: string, def: McpServerDef): Conn {
    // Keyed by definition too: two files may give one server name different commands.
    const key = `${name}\0${JSON.stringify(def)}`;
    let conn = this.conns.get(key);
    if (!conn) {
      conn = { name, def, stderr: '' };
      this.conns.set(key, conn);
    }
    return conn;
  }

  /** The open client of a connection; concurrent first callers share one connection attempt. */
  private client(conn: Conn, signal: AbortSignal): Promise<Client> {
    if (this.closed) {
      throw new HatcheryError('ABORTED', `MCP server "${conn.name}": the tool layer was closed`, {
        server: conn.name,
      });
    }
    if (conn.client) return Promise.resolve(conn.client);
    if (!conn.connecting) {
      const attempt = this.connect(conn);
      conn.connecting = attempt;
      const done = () => {
        if (conn.connecting === attempt) conn.connecting = undefined;
      };
      attempt.then(done, done);
    }
    // The attempt is shared, so it does not use any one caller's signal; callers stop waiting instead.
    return raceSignal(conn.connecting, signal);
  }

  private async connect(conn: Conn): Promise<Client> {
    try {
      return await this.open(conn, false);
    } catch (err) {
      // The SDK takes a 5xx answer to the probe for a failure, not for a 2025 server, but some 2025
      // servers answer any request before `initialize` so: they get the 2025 handshake alone, once.
      // Only a failure of the era probe itself counts (not of auth, nor of the handshake after it).
      const cause = err instanceof HatcheryError ? err.cause : err;
      if (!('url' in conn.def) || this.closed || !isSdkError(cause, SdkErrorCode.EraNegotiationFailed))
        throw err;
      return this.open(conn, true);
    }
  }

  private async open(conn: Conn, legacyOnly: boolean): Promise<Client> {
    const { def } = conn;
    // HTTP servers are probed for the 2026-07-28 era (one `server/discover` round trip per connection;
    // a 2025-only server falls back to `initialize`), so servers that speak only 2026 work too. Stdio
    // servers keep the 2025 handshake: there the probe would need a second process (or risk the one
    // process, since some servers exit on any request before `initialize`), and every stdio server in
    // use still speaks 2025. `legacyOnly` skips the probe.
    const options: ClientOptions = { capabilities: {} };
    if ('url' in def && !legacyOnly) options.versionNegotiation = { mode: 'auto' };
    const client = new Client(this.clientInfo, options);
    let transport: Transport;
    if ('url' in def) {
      transport = httpTransport(conn.name, def);
    } else {
      // A missing folder would make spawn fail with ENOENT, which reads as "program not found".
      const badCwd = def.cwd === undefined ? undefined : cwdProblem(def.cwd);
      if (badCwd) {
        throw new HatcheryError(
          'TOOL',
          `MCP server "${conn.name}": cannot start "${describeServer(def)}" in its cwd: ${badCwd}; create the folder or fix the "cwd" of the server entry`,
          { server: conn.name, command: describeServer(def), path: def.cwd },
        );
      }
      const stdio = stdioTransport({
        command: def.command,
        args: def.args ?? [],
        // The one child policy: the allow-list plus the entry's `env` (`${NAME}` passes NAME through).
        env: childEnv(def.env),
        cwd: def.cwd,
      });
      conn.stderr = '';
      stdio.stderr?.on('data', (chunk: Buffer) => {
        conn.stderr = (conn.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      transport = stdio;
    }
    client.onerror = () => {
      // Transport errors surface as failed calls or a close; nothing to do here.
    };
    client.onclose = () => {
      if (conn.client === client) {
        conn.client = undefined;
        conn.tools = undefined;
      }
    };
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (conn.client === client) conn.tools = undefined;
    });
    try {
      await client.connect(transport, { timeout: this.connectTimeoutMs });
    } catch (err) {
      await client.close().catch(() => {});
      // The tail of stderr may still be in flight when the close is reported.
      await new Promise((r) => setTimeout(r, 20));
      throw this.startError(conn, err);
    }
    if (this.closed) {
      await client.close().catch(() => {});
      throw new HatcheryError('ABORTED', `MCP server "${conn.name}": the tool layer was closed`);
    }
    conn.client = client;
    return client;
  }

  private startError(conn: Conn, err: unknown): HatcheryError {
    const refused = 'url' in conn.def ? refusedError(conn.name, conn.def, err) : undefined;
    if (refused) return refused;
    const e = err as NodeJS.ErrnoException;
    const what = 'url' in conn.def ? `connect to ${conn.def.url}` : `start "${describeServer(conn.def)}"`;
    let why = e.message;
    if (e.code === 'ENOENT' && !('url' in conn.def))
      why = `program not found: "${conn.def.command}" (is it installed and on PATH?)`;
    else if (isSdkError(err, SdkErrorCode.ConnectionClosed))
      why = 'it exited (or closed its output) before completing the MCP handshake';
    else if (isSdkError(err, SdkErrorCode.RequestTimeout))
      why = `it did not complete the MCP handshake within ${this.connectTimeoutMs} ms`;
    const tail = stderrTail(conn, 800);
    return new HatcheryError(
      'TOOL',
      `MCP server "${conn.name}": cannot ${what}: ${why}${tail ? `; its stderr ends with: ${tail}` : ''}; ${'url' in conn.def ? 'check that the server is up at that URL' : 'run the command yourself to see why'}, or fix the server entry`,
      { server: conn.name, command: describeServer(conn.def) },
      { cause: err },
    );
  }

  private async listTools(conn: Conn, client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      let page: Awaited<ReturnType<Client['listTools']>>;
      try {
        page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.connectTimeoutMs });
      } catch (err) {
        throw this.callError(conn, client, 'tools/list', err);
      }
      for (const t of page.tools) tools.push(this.makeTool(conn, t));
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  private makeTool(
    conn: Conn,
    t: { name: string; description?: string; inputSchema: Record<string, unknown> },
  ): Tool {
    const ref = `mcp:${conn.name}/${t.name}`;
    return {
      name: t.name,
      description: t.description ?? `${t.name} (MCP server ${conn.name})`,
      inputSchema: t.inputSchema,
      ref,
      call: async (args, tc): Promise<ToolResult> => {
        // Looked up per call, so a tool listed before a crash uses the new connection.
        const client = await this.client(conn, tc.signal);
        const params: CallToolParams = { name: t.name, arguments: args };
        // The run's trace context goes on to the server (W3C keys in _meta, SEP-414); calls made
        // outside a run (validate --connect) have no scope.
        const trace = tc.trace ?? tc.scope?.shared.trace;
        if (trace) params._meta = { ...trace };
        let res: Awaited<ReturnType<Client['callTool']>>;
        try {
          res = await client.callTool(params, { signal: tc.signal, timeout: NO_SDK_TIMEOUT });
        } catch (err) {
          throw this.callError(conn, client, t.name, err);
        }
        const structured = (res as { structuredContent?: unknown }).structuredContent;
        let text = contentText(res.content);
        if (!text && structured !== undefined) text = JSON.stringify(structured);
        const out: ToolResult = { text };
        if (res.isError === true) out.isError = true;
        if (structured !== undefined) out.structured = structured;
        return out;
      },
    };
  }

  /** Turns a failed request into a HatcheryError; a lost connection is dropped so the next call reconnects. */
  private callError(conn: Conn, client: Client, what: string, err: unknown): unknown {
    if (isAbortError(err) || err instanceof HatcheryError) return err;
    if (isSdkError(err, SdkErrorCode.RequestTimeout)) return err;
    // A token revoked or expired while connected.
    const refused = 'url' in conn.def ? refusedError(conn.name, conn.def, err) : undefined;
    if (refused) return refused;
    if (isConnectionError(err)) {
      if (conn.client === client) {
        conn.client = undefined;
        conn.tools = undefined;
      }
      client.close().catch(() => {});
      const tail = stderrTail(conn, 500);
      return new HatcheryError(
        'TOOL',
        `MCP server "${conn.name}" lost its connection during ${what} (${(err as Error).message})${tail ? `; its stderr ends with: ${tail}` : ''}; the next call starts it again`,
        { server: conn.name, tool: what },
        { cause: err },
      );
    }
    return new HatcheryError(
      'TOOL',
      `MCP server "${conn.name}" refused ${what}: ${(err as Error).message}`,
      { server: conn.name, tool: what },
      { cause: err },
    );
  }
}
