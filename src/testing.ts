// hatchery-mcp/testing: what tests of programs that embed hatchery-mcp need to run workflows without a
// model. Pass a ScriptedProvider as `providers: { openai: model }` (or anthropic) of a Runtime.

export type {
  Script,
  ScriptedProviderConfig,
  ScriptedProviderOptions,
  ScriptedReply,
  ScriptedReplyFn,
  ScriptedToolCall,
} from './providers/scripted.js';
export { ScriptedProvider } from './providers/scripted.js';
