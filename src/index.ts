// The public API of hatchery-mcp, hand-picked: what a program embedding it needs to load, run and serve
// hatcheries, plug in models and read results. Everything else is internal and may change; test fakes
// are in ./testing.ts (hatchery-mcp/testing).

export type { ErrorCode, ErrorContext, ValidationProblem } from './core/errors.js';
export { formatError, HatcheryError, ValidationError } from './core/errors.js';
export type { TraceContext } from './core/trace.js';
export type {
  AskFn,
  AskRequest,
  Hatchery,
  LoadOptions,
  NetworkOptions,
  RunEvent,
  RunListener,
  Tool,
  ToolContext,
  ToolResult,
} from './engine/contracts.js';
export type { ResumeOptions } from './journal/resume.js';
export type { LoadResult } from './loader/load.js';
export { findHatcheryFiles, loadHatchery, loadHatcheryObject, loadHatcheryText } from './loader/load.js';
export type { HttpHandle, HttpServeOptions } from './mcp/http.js';
export { serveHttp } from './mcp/http.js';
export type { HatcheryServerOptions, LogLevel } from './mcp/server.js';
export { HatcheryMcpServer } from './mcp/server.js';
export type { AnthropicProviderOptions } from './providers/anthropic.js';
export { AnthropicProvider, createAnthropicProvider } from './providers/anthropic.js';
export type { OpenAIProviderOptions } from './providers/openai.js';
export { createOpenAIProvider, OpenAIProvider } from './providers/openai.js';
export type { ProviderFactory, Vendor } from './providers/resolve.js';
export type { CreateMessageFn, SamplingProviderOptions } from './providers/sampling.js';
export { createSamplingProvider } from './providers/sampling.js';
export type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  Provider,
  SdkProviderOptions,
  ToolCall,
  ToolSpec,
  Usage,
} from './providers/types.js';
export type { RunOptions, RunResult, RuntimeOptions } from './runtime/runtime.js';
export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS, Runtime } from './runtime/runtime.js';
export type { HatcheryDef, McpServerDef } from './schema/hatchery.js';
export { hatcherySchema } from './schema/hatchery.js';
export { hatcheryJsonSchema } from './schema/json-schema.js';
export type { ToolResolverOptions } from './tools/resolve.js';
