import type { ValidationProblem } from '../core/errors.js';
import type { Hatchery, Tool } from '../engine/contracts.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { didYouMean, listNames } from '../schema/suggest.js';
import { toolRefFields } from '../schema/tool-refs.js';
import { checkArgs } from './check-args.js';
import { anchored, parseServerEntry } from './mcp-entry.js';
import { parseToolRef } from './refs.js';

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
}

/** One place a file uses an MCP server. */
interface Use {
  server: string;
  def: McpServerDef;
  /** JSON path of the reference. */
  field: string;
  ref: string;
  tool?: string;
  /** A baneling's tool_args, checked against the tool's inputSchema. */
  args?: { value: unknown; field: string };
}

/** Every mcp: reference and `mcp` server entry of a loaded hatchery, with its server definition. */
function usesOf(h: Hatchery, options: ConnectCheckOptions): Use[] {
  const servers = { ...(options.mcpServers ?? {}), ...(h.def.mcpServers ?? {}) };
  const uses: Use[] = [];
  const addRef = (ref: string, field: string, args?: Use['args']) => {
    const parsed = parseToolRef(ref);
    if ('error' in parsed || parsed.kind !== 'mcp' || !Object.hasOwn(servers, parsed.server)) return;
    const def = anchored(servers[parsed.server]!, h.dir);
    uses.push({ server: parsed.server, def, field, ref, tool: parsed.tool, args });
  };
  for (const node of h.nodes.values()) {
    const d = h.def.nodes[node.index] as Record<string, unknown>;
    const at = `nodes/${node.index}`;
    for (const { ref, field } of toolRefFields(node.kind, d)) {
      const args = field === 'tool_name' ? { value: d.tool_args ?? {}, field: `${at}/tool_args` } : undefined;
      addRef(ref, `${at}/${field}`, args);
    }
    if (node.kind !== 'drone') continue;
    ((d.mcp as string[] | undefined) ?? []).forEach((entry, i) => {
      const def = parseServerEntry(entry, h.dir);
      if (!('error' in def)) uses.push({ server: entry.trim(), def, field: `${at}/mcp/${i}`, ref: entry });
    });
  }
  return uses;
}

/**
 * `validate --connect`: starts every MCP server a loaded hatchery uses (through the same client pool
 * runs use), lists its tools, and reports servers that do not start, tool names the server lacks
 * (with "did you mean") and baneling tool_args that do not fit the tool's inputSchema. Every server
 * is closed before it returns, also on timeout or cancellation.
 */
export async function connectCheck(
  hatchery: Hatchery,
  options: ConnectCheckOptions = {},
): Promise<ValidationProblem[]> {
  const uses = usesOf(hatchery, options);
  if (uses.length === 0) return [];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { McpPool } = await import('./mcp-client.js');
  const pool = new McpPool({ connectTimeoutMs: timeoutMs });
  const problems: ValidationProblem[] = [];
  try {
    const byServer = new Map<string, Use[]>();
    for (const u of uses) {
      const list = byServer.get(u.server);
      if (list) list.push(u);
      else byServer.set(u.server, [u]);
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
  return problems.sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
}

/** The problems of one use against the tools its server listed. */
function checkUse(u: Use, tools: Tool[]): ValidationProblem[] {
  const names = tools.map((t) => t.name);
  if (u.tool === undefined) {
    if (!u.args || tools.length === 1) return tools.length === 1 && u.args ? argProblems(u, tools[0]!) : [];
    return [
      {
        path: u.field,
        message: `"${u.ref}" stands for ${tools.length} tools; a baneling calls one: name it as mcp:${u.server}/<tool> (tools: ${listNames(names) || 'none'})`,
      },
    ];
  }
  const tool = tools.find((t) => t.name === u.tool);
  if (!tool) {
    return [
      {
        path: u.field,
        message: `MCP server "${u.server}" has no tool "${u.tool}"${didYouMean(u.tool, names)}; its tools: ${listNames(names) || 'none'}`,
      },
    ];
  }
  return u.args ? argProblems(u, tool) : [];
}

function argProblems(u: Use, tool: Tool): ValidationProblem[] {
  return checkArgs(u.args!.value, tool.inputSchema, u.ref).map((p) => ({
    path: p.path ? `${u.args!.field}/${p.path}` : u.args!.field,
    message: p.message,
  }));
}
