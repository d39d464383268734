import type { CompiledNode } from '../engine/contracts.js';
import type { Template } from '../engine/templates/templates.js';
import type { HatcheryDef, McpServerDef } from '../schema/hatchery.js';

/** Options that shape how files are loaded (from the CLI or the embedding program). */
export interface LoadOptions {
  /** MCP servers from --mcp-config; a file's own `mcpServers` entries win over them. */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
}

/** What a node kind's compiler can use and report to, for one node of one file. */
export interface CompileContext {
  readonly file: string;
  readonly dir: string;
  readonly def: HatcheryDef;
  readonly nodeNames: ReadonlySet<string>;
  readonly options: LoadOptions;
  /** Servers visible to this file: --mcp-config entries overlaid by the file's own. */
  readonly mcpServers: Readonly<Record<string, McpServerDef>>;
  /** Compiles a template field; a syntax error is recorded as a problem and yields undefined. */
  template(source: string, field: string): Template | undefined;
  /** Records a problem at a field of the current node (`field` may be a sub-path like `tools/2`). */
  problem(field: string, message: string): void;
  /** Marks a file this hatchery depends on (watched for hot reload). */
  dependency(absPath: string): void;
}

/** The parts of a compiled node every kind shares; kinds add `exec` (and `preflight`). */
export type NodeBase = Omit<CompiledNode, 'exec' | 'preflight'>;

/** One node kind: turns a validated definition into a runnable node. */
export interface NodeKindImpl<D> {
  compile(def: D, base: NodeBase, cc: CompileContext): CompiledNode;
}

/** Re-exported for node kinds that keep compiled templates. */
export type { Template };
