import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import type { RealPathCheck } from '../core/fs/safe-fs.js';
import type { Hatchery, NetworkOptions, RunContext, Tool, ToolRef } from '../engine/contracts.js';
import type { A2aAgentDef, McpServerDef } from '../schema/hatchery.js';
import { type A2aRefWithDef, agentFor } from './a2a/agent-def.js';
import type { A2aAgents } from './a2a/agents.js';
import { BUILTIN_TOOLS, shellExecTool } from './builtin/index.js';
import type { McpRefWithDef } from './compile.js';
import { JsTools } from './js.js';
import type { McpPool } from './mcp-client.js';
import { anchored } from './mcp-entry.js';
import { hatchTool, nodeTool } from './nested.js';

/** Options of the tool layer. */
export interface ToolResolverOptions extends NetworkOptions {
  /** Enables the shell_exec built-in (--allow-shell). */
  allowShell?: boolean;
  /** MCP servers from --mcp-config. */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
  /** Largest tool result shown to a model, in characters (default 20000); longer ones are cut with a note. */
  resultLimit?: number;
  /** Default timeout of one tool call, in milliseconds (default 120000). */
  toolTimeoutMs?: number;
  /** Time an MCP server gets to start and initialize, in milliseconds (default 30000). */
  mcpConnectTimeoutMs?: number;
}

/** Default cap on tool result text shown to a model. */
const DEFAULT_RESULT_LIMIT = 20_000;
/** Default timeout of one tool call. */
const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/**
 * Loads the hatchery at an absolute path for a hatch: tool, reading it through `check` (its real path
 * must stay below the caller's roots); the runtime's cache, so every file is loaded one way.
 */
export type HatcheryLoader = (abs: string, check: RealPathCheck) => Promise<Hatchery>;

/** Turns tool references into callable tools for a run. One per Runtime; shared by all runs. */
export class ToolResolver {
  readonly resultLimit: number;
  readonly toolTimeoutMs: number;
  // Made on the first mcp: tool: runs without one never load the MCP client SDK.
  private mcp: Promise<McpPool> | undefined;
  // Made on the first a2a: tool: runs without one never load the A2A SDK.
  private a2a: Promise<A2aAgents> | undefined;
  /** Modules of js: tools. */
  readonly js = new JsTools();

  constructor(
    readonly options: ToolResolverOptions,
    private readonly loadHatchery: HatcheryLoader,
  ) {
    this.resultLimit = options.resultLimit ?? DEFAULT_RESULT_LIMIT;
    this.toolTimeoutMs = options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  }

  /** The tools a reference stands for (an mcp:<server> reference may stand for several). */
  async resolve(ref: ToolRef, scope: RunContext): Promise<Tool[]> {
    switch (ref.kind) {
      case 'builtin': {
        if (ref.name === shellExecTool.name) {
          if (!this.options.allowShell) {
            throw new HatcheryError(
              'TOOL',
              'shell_exec is disabled: start with --allow-shell (or pass tools.allowShell to the Runtime) to let this hatchery run programs',
              { tool: ref.ref },
            );
          }
          return [shellExecTool];
        }
        const tool = BUILTIN_TOOLS.get(ref.name);
        if (!tool)
          throw new HatcheryError('UNKNOWN_TOOL', `unknown built-in tool "${ref.name}"`, { tool: ref.ref });
        return [tool];
      }
      case 'hatch': {
        const abs = this.hatchPath(ref.ref, ref.path, scope);
        // Read through a checked descriptor: the file cannot be swapped for a link to elsewhere.
        const sub = await this.loadHatchery(abs, scope.guard.readCheck(ref.path, abs, { tool: ref.ref }));
        return [hatchTool(ref.ref, sub)];
      }
      case 'node':
        return [nodeTool(ref.ref, ref.node)];
      case 'mcp': {
        const def = this.serverDef(ref, scope);
        const pool = await this.pool();
        if (ref.tool === undefined) return pool.tools(ref.server, def, scope.signal);
        return [await pool.tool(ref.server, def, ref.tool, scope.signal)];
      }
      case 'js':
        return [await this.js.resolve(ref, scope)];
      case 'a2a': {
        const { def, who } = this.agentDef(ref, scope);
        return (await this.agents()).tools(ref, def, who);
      }
    }
  }

  /** The definition of an A2A agent: attached at load time, the file's entry, or the URL itself. */
  private agentDef(ref: A2aRefWithDef, scope: RunContext): { def: A2aAgentDef; who: string } {
    const found = agentFor(ref, scope.hatchery.def.a2aAgents);
    if (found) return found;
    throw new HatcheryError(
      'UNKNOWN_TOOL',
      `no A2A agent named "${ref.agent}"; define it in "a2aAgents" of the hatchery file, or write its URL (a2a:https://...)`,
      { tool: ref.ref },
    );
  }

  /** The remote A2A agents, shared by all runs. */
  private agents(): Promise<A2aAgents> {
    this.a2a ??= import('./a2a/agents.js').then(({ A2aAgents }) => new A2aAgents(this.options));
    return this.a2a;
  }

  /** The file of a hatch: reference, confined to the read roots like every other path. */
  private hatchPath(ref: string, rel: string, scope: RunContext): string {
    const guard = scope.guard;
    const abs = path.resolve(scope.hatchery.dir, rel);
    if (guard.allows(abs)) return abs;
    throw new HatcheryError(
      'PATH_DENIED',
      `"${ref}": ${abs} is outside the folders runs may read (${guard.roots.join(', ')}); move the file below one of them, or allow its folder with --allow-root DIR`,
      { tool: ref, path: rel },
    );
  }

  /** The definition of an MCP server: attached at load time, else the file's or --mcp-config's entry. */
  private serverDef(ref: Extract<ToolRef, { kind: 'mcp' }>, scope: RunContext): McpServerDef {
    const attached = (ref as McpRefWithDef).def;
    if (attached) return attached;
    const own = (m: Readonly<Record<string, McpServerDef>> | undefined) =>
      m && Object.hasOwn(m, ref.server) ? m[ref.server] : undefined;
    const def = own(scope.hatchery.def.mcpServers) ?? own(this.options.mcpServers);
    if (!def) {
      throw new HatcheryError(
        'UNKNOWN_TOOL',
        `no MCP server named "${ref.server}"; define it in "mcpServers" of the hatchery file or in the --mcp-config file`,
        { tool: ref.ref },
      );
    }
    return anchored(def, scope.hatchery.dir);
  }

  /** The MCP client connections, shared by all runs. */
  private pool(): Promise<McpPool> {
    this.mcp ??= import('./mcp-client.js').then(
      ({ McpPool }) => new McpPool({ connectTimeoutMs: this.options.mcpConnectTimeoutMs }),
    );
    return this.mcp;
  }

  /** Closes connections held for tools (MCP clients and the server processes they started). */
  async close(): Promise<void> {
    const pool = this.mcp;
    this.mcp = undefined;
    if (pool) await (await pool).close();
  }
}
