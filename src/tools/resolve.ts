import path from 'node:path';
import { HatcheryError } from '../errors.js';
import { HatcheryCache } from '../loader/load.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Scope } from '../runtime/scope.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import { hatchTool, nodeTool } from './nested.js';
import type { ToolRef } from './refs.js';
import type { Tool } from './types.js';

/** Options of the tool layer. */
export interface ToolResolverOptions {
  /** Enables the shell_exec built-in (--allow-shell). */
  allowShell?: boolean;
  /** MCP servers from --mcp-config. */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
  /** Largest tool result shown to a model, in characters (default 20000); longer ones are cut with a note. */
  resultLimit?: number;
  /** Default timeout of one tool call, in milliseconds (default 120000). */
  toolTimeoutMs?: number;
}

/** Default cap on tool result text shown to a model. */
export const DEFAULT_RESULT_LIMIT = 20_000;
/** Default timeout of one tool call. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/** Turns tool references into callable tools for a run. One per Runtime; shared by all runs. */
export class ToolResolver {
  /** Sub-hatcheries of hatch: tools, reloaded when their files change. */
  readonly hatcheries: HatcheryCache;
  readonly resultLimit: number;
  readonly toolTimeoutMs: number;

  constructor(
    readonly runtime: Runtime,
    readonly options: ToolResolverOptions,
  ) {
    this.hatcheries = new HatcheryCache({ mcpServers: options.mcpServers });
    this.resultLimit = options.resultLimit ?? DEFAULT_RESULT_LIMIT;
    this.toolTimeoutMs = options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  }

  /** The tools a reference stands for (an mcp:<server> reference may stand for several). */
  async resolve(ref: ToolRef, scope: Scope): Promise<Tool[]> {
    switch (ref.kind) {
      case 'builtin': {
        const tool = BUILTIN_TOOLS.get(ref.name);
        if (!tool)
          throw new HatcheryError('UNKNOWN_TOOL', `unknown built-in tool "${ref.name}"`, { tool: ref.ref });
        return [tool];
      }
      case 'hatch': {
        const abs = path.resolve(scope.hatchery.dir, ref.path);
        const sub = await this.hatcheries.get(abs);
        return [hatchTool(ref.ref, sub)];
      }
      case 'node':
        return [nodeTool(ref.ref, ref.node)];
      case 'mcp':
      case 'js':
        throw new HatcheryError('UNKNOWN_TOOL', `${ref.kind}: tools are not available in this build`, {
          tool: ref.ref,
        });
    }
  }

  /** Closes connections held for tools (MCP clients). */
  async close(): Promise<void> {}
}
