import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type * as Api from '../../src/index.js';
import type * as Testing from '../../src/testing.js';
import { REPO_ROOT } from '../helpers.js';

// The package as a user imports it: through the "exports" map of package.json, from dist/ (built by
// `npm run build`). The specifiers are variables so that type-checking does not need dist/.
const entry = (name: string): Promise<unknown> => import(name);
const loadApi = () => entry('hatchery-mcp') as Promise<typeof Api>;
const loadTesting = () => entry('hatchery-mcp/testing') as Promise<typeof Testing>;

// Every value the package exports, deliberately; a new export must be added here on purpose.
const API_VALUES = [
  'AnthropicProvider',
  'DEFAULT_MAX_DEPTH',
  'DEFAULT_MAX_STEPS',
  'HatcheryError',
  'HatcheryMcpServer',
  'OpenAIProvider',
  'Runtime',
  'ValidationError',
  'createAnthropicProvider',
  'createOpenAIProvider',
  'createSamplingProvider',
  'findHatcheryFiles',
  'formatError',
  'hatcheryJsonSchema',
  'hatcherySchema',
  'loadHatchery',
  'loadHatcheryObject',
  'loadHatcheryText',
  'serveHttp',
];

// Every type the package exports; types leave no trace at run time, so they are read from the
// declaration files the "exports" map names.
const API_TYPES = [
  'AnthropicProviderOptions',
  'AskFn',
  'AskRequest',
  'ChatMessage',
  'ChatRequest',
  'ChatResponse',
  'CreateMessageFn',
  'ErrorCode',
  'ErrorContext',
  'Hatchery',
  'HatcheryDef',
  'HatcheryServerOptions',
  'HttpHandle',
  'HttpServeOptions',
  'LoadOptions',
  'LoadResult',
  'LogLevel',
  'McpServerDef',
  'NetworkOptions',
  'OpenAIProviderOptions',
  'Provider',
  'ProviderFactory',
  'ResumeOptions',
  'RunEvent',
  'RunListener',
  'RunOptions',
  'RunResult',
  'RuntimeOptions',
  'SamplingProviderOptions',
  'SdkProviderOptions',
  'Tool',
  'ToolCall',
  'ToolContext',
  'ToolResolverOptions',
  'ToolResult',
  'ToolSpec',
  'TraceContext',
  'Usage',
  'ValidationProblem',
  'Vendor',
];

/** The names `export type { ... }` lines of the declaration file of package export `sub` list. */
function exportedTypes(sub: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  const dts = readFileSync(path.join(REPO_ROOT, pkg.exports[sub].types), 'utf8');
  const names: string[] = [];
  for (const m of dts.matchAll(/export type \{([^}]*)\}/g)) {
    for (const n of m[1]!.split(',')) if (n.trim()) names.push(n.trim());
  }
  return names.sort();
}

describe('the public API', () => {
  it('hatchery-mcp exports exactly the intended values, and no test fake or internal helper', async () => {
    const api = await loadApi();
    expect(Object.keys(api).sort()).toEqual(API_VALUES);
    expect(exportedTypes('.')).toEqual(API_TYPES);
  });

  it('hatchery-mcp/testing exports the scripted provider', async () => {
    const testing = await loadTesting();
    expect(Object.keys(testing).sort()).toEqual(['ScriptedProvider']);
    expect(exportedTypes('./testing')).toEqual([
      'Script',
      'ScriptedProviderConfig',
      'ScriptedProviderOptions',
      'ScriptedReply',
      'ScriptedReplyFn',
      'ScriptedToolCall',
    ]);
  });

  it('loads and runs a hatchery defined in code, with a scripted model', async () => {
    const api = await loadApi();
    const { ScriptedProvider } = await loadTesting();
    const loaded = api.loadHatcheryObject(
      {
        name: 'embedded',
        desc: 'built in code',
        nodes: [{ name: 'Say', usr_prompt: 'Say {{ ctx.input }}' }],
      },
      '',
    );
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    const model = new ScriptedProvider((req) => `said: ${req.messages[0]?.content}`);
    const runtime = new api.Runtime({ providers: { openai: model }, env: {} });
    const result = await runtime.run(loaded.hatchery, { input: 'hi' });
    expect(result.output).toBe('said: Say hi');
    expect(model.callCount).toBe(1);
  });

  it('reports invalid definitions as a ValidationError listing the problems', async () => {
    const api = await loadApi();
    const loaded = api.loadHatcheryObject({ name: 'x', nodes: [] }, 'inline.json');
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.error).toBeInstanceOf(api.ValidationError);
    expect(loaded.error.problems.map((p) => p.path)).toEqual(['desc', 'nodes']);
  });
});
