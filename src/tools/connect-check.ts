import type { ValidationProblem } from '../core/errors.js';
import type { Hatchery, NetworkOptions, Tool } from '../engine/contracts.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { didYouMean, listNames } from '../schema/suggest.js';
import { type RefUse, refUses, useArgProblems } from './check-args.js';
import { anchored, parseServerEntry } from './mcp-entry.js';

/** Default time one server gets to start, initialize and list its tools. */
const DEFAULT_TIMEOUT_MS = 30_000;

/** Options of connectCheck. */
export interface ConnectCheckOptions {
  /** Servers of --mcp-config; the file's own `mcpServers` entries win over them (as at run time). */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
  /** Time each server gets to start and list its tools, in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Ends the whole check (every server is still closed). */
  signal?: AbortSignal;
  /** What A2A agents' card fetches may reach (--allow-host, --allow-private-network), as in a run. */
  network?: NetworkOptions;
}

/** One place a file uses an MCP server: an mcp: reference, or a drone's `mcp` entry (its text is the server). */
type Use = RefUse<'mcp'> & { def: McpServerDef };

/** Every mcp: reference and `mcp` server entry of a loaded hatchery, with its server definition. */
function usesOf(h: Hatchery, options: ConnectCheckOptions): Use[] {
  const servers = { ...(options.mcpServers ?? {}), ...(h.def.mcpServers ?? {}) };
  const uses: Use[] = [];
  for (const u of refUses(h, 'mcp')) {
    if (Object.hasOwn(servers, u.ref.server))
      uses.push({ ...u, def: anchored(servers[u.ref.server]!, h.dir) });
  }
  for (const node of h.nodes.values()) {
    if (node.kind !== 'drone') continue;
    ((h.def.nodes[node.index] as { mcp?: string[] }).mcp ?? []).forEach((entry, i) => {
      const def = parseServerEntry(entry, h.dir);
      const ref = { kind: 'mcp', ref: entry, server: entry.trim() } as const;
      if (!('error' in def)) uses.push({ ref, def, field: `nodes/${node.index}/mcp/${i}` });
    });
  }
  return uses;
}

/**
 * `validate --connect`: starts every MCP server a loaded hatchery uses (through the same client pool
 * runs use), lists its tools, fetches the card of every A2A agent it calls, and reports servers and
 * agents that do not answer, tool and skill names they lack (with "did you mean") and baneling
 * tool_args that do not fit the tool's inputSchema. Every server is closed before it returns, also
 * on timeout or cancellation.
 */
export async function connectCheck(
  hatchery: Hatchery,
  options: ConnectCheckOptions = {},
): Promise<ValidationProblem[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
  const [mcp, a2a] = await Promise.all([
    mcpCheck(hatchery, options, timeoutMs),
    refUses(hatchery, 'a2a').length === 0
      ? []
      : import('./a2a/check.js').then(({ a2aCheck }) =>
          a2aCheck(hatchery, options.network ?? {}, AbortSignal.any(signals)),
        ),
  ]);
  return [...mcp, ...a2a].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
}

/** The MCP part of connectCheck: every server started, its tools listed and checked. */
async function mcpCheck(
  hatchery: Hatchery,
  options: ConnectCheckOptions,
  timeoutMs: number,
): Promise<ValidationProblem[]> {
  const uses = usesOf(hatchery, options);
  if (uses.length === 0) return [];
  const { McpPool } = await import('./mcp-client.js');
  const pool = new McpPool({ connectTimeoutMs: timeoutMs });
  const problems: ValidationProblem[] = [];
  try {
    const byServer = new Map<string, Use[]>();
    for (const u of uses) {
      const list = byServer.get(u.ref.server);
      if (list) list.push(u);
      else byServer.set(u.ref.server, [u]);
    }
    await Promise.all(
      [...byServer].map(async ([server, list]) => {
        const first = list[0]!;
        const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
        let tools: Tool[];
        try {
          tools = await pool.tools(server, first.def, AbortSignal.any(signals));
        } catch (err) {
          problems.push({
            path: first.field,
            message: `MCP server "${server}" did not start or list its tools: ${(err as Error).message}`,
          });
          return;
        }
        for (const u of list) problems.push(...checkUse(u, tools));
      }),
    );
  } finally {
    await pool.close();
  }
  return problems;
}

/** The problems of one use against the tools its server listed. */
function checkUse(u: Use, tools: Tool[]): ValidationProblem[] {
  const names = tools.map((t) => t.name);
  const { server, tool: name } = u.ref;
  if (name === undefined) {
    if (!u.args || tools.length === 1)
      return tools.length === 1 ? useArgProblems(u, tools[0]!.inputSchema) : [];
    return [
      {
        path: u.field,
        message: `"${u.ref.ref}" stands for ${tools.length} tools; a baneling calls one: name it as mcp:${server}/<tool> (tools: ${listNames(names) || 'none'})`,
      },
    ];
  }
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    return [
      {
        path: u.field,
        message: `MCP server "${server}" has no tool "${name}"${didYouMean(name, names)}; its tools: ${listNames(names) || 'none'}`,
      },
    ];
  }
  return useArgProblems(u, tool.inputSchema);
}
