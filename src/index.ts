// The public API of hatchery-mcp, hand-picked: everything else is internal and may change.

export type { ErrorCode, ErrorContext, ValidationProblem } from './errors.js';
export { formatError, HatcheryError, ValidationError } from './errors.js';
export type { LoadResult } from './loader/load.js';
export {
  findHatcheryFiles,
  HatcheryCache,
  loadHatchery,
  loadHatcheryObject,
  loadHatcheryText,
} from './loader/load.js';
export type { LoadOptions } from './nodes/kind.js';
export type { ModelSpec, ProviderFactory, Vendor } from './providers/resolve.js';
export { parseModel } from './providers/resolve.js';
export type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  Provider,
  ToolCall,
  ToolSpec,
  Usage,
} from './providers/types.js';
export type { RunOptions, RunResult, RuntimeOptions } from './runtime/runtime.js';
export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS, Runtime } from './runtime/runtime.js';
export type { CompiledNode, Hatchery, NodeResult, RunEvent, RunListener } from './runtime/types.js';
export type { HatcheryDef, McpServerDef } from './schema/hatchery.js';
export { hatcherySchema } from './schema/hatchery.js';
export { hatcheryJsonSchema } from './schema/json-schema.js';
export type { Tool, ToolContext, ToolResult } from './tools/types.js';
