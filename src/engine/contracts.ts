import type { Usage } from '../providers/types.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import type { NodeKind } from '../schema/nodes.js';
import type { Scope } from './scope.js';
import type { Template } from './templates/templates.js';

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
  /** Checks done once per run before any node runs (e.g. API keys of drones). */
  readonly preflight?: (scope: Scope) => void;
  /** Runs the node in a scope. */
  readonly exec: (scope: Scope) => Promise<NodeResult>;
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
  /** Files this hatchery depends on (hatch: targets, files entries), for hot reload. */
  readonly dependencies: readonly string[];
}

/** Events of a run, for the CLI, traces and MCP progress. `depth` > 0 marks nested runs. */
export type RunEvent =
  | { type: 'run_start'; runId: string; hatchery: string; depth: number }
  | {
      type: 'node_start';
      runId: string;
      hatchery: string;
      node: string;
      kind: string;
      step: number;
      depth: number;
    }
  | {
      type: 'node_end';
      runId: string;
      hatchery: string;
      node: string;
      step: number;
      depth: number;
      output: string;
      usage?: Usage;
      ms: number;
    }
  | {
      type: 'tool_call';
      runId: string;
      hatchery: string;
      node: string;
      tool: string;
      depth: number;
      ms: number;
      isError: boolean;
    }
  | {
      type: 'run_end';
      runId: string;
      hatchery: string;
      depth: number;
      ok: boolean;
      output?: string;
      error?: string;
      usage: Usage;
      steps: number;
      ms: number;
    };

/** Receives run events. Listeners must not throw; errors they raise are ignored. */
export type RunListener = (event: RunEvent) => void;
