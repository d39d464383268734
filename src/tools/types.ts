import type { Scope } from '../engine/scope.js';

/** What a tool call may use: the calling run's scope, its cancellation signal, the calling node. */
export interface ToolContext {
  scope: Scope;
  signal: AbortSignal;
  /** Name of the node making the call (for error messages). */
  node: string;
}

/** A tool's answer. `isError` results are shown to the model as errors; the run goes on. */
export interface ToolResult {
  text: string;
  isError?: boolean;
  /** Structured content (MCP structuredContent, js: return values), kept beside the text. */
  structured?: unknown;
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
  call(args: Record<string, unknown>, tc: ToolContext): Promise<ToolResult>;
}
