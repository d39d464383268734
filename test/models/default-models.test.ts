/**
 * The default models: what the built CLI sends when a drone names no model, that the Anthropic SDK
 * prints no deprecation warning for it (and that this test would see one), and that neither default
 * is on the deprecated list of the installed SDK.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { VENDORS, vendorInfo } from '../../src/providers/vendors.js';
import { fakeVendors } from '../fakes/vendors.js';
import { type CliResult, cliFolder } from '../helpers.js';

const { openai, anthropic } = fakeVendors();
beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

/** Runs a one-drone hatchery that names no model (so the default applies) in a fresh folder. */
function runHello(input: string, env: Record<string, string>): Promise<CliResult> {
  const folder = cliFolder({ prefix: 'hatchery-models-' });
  const drone = { name: 'Answer', type: 'drone', sys_prompt: 'Be brief.', usr_prompt: '{{ ctx.input }}' };
  const file = folder.write('hello.json', { name: 'hello', desc: 'Answers a question.', nodes: [drone] });
  return folder.run(file, ['--input', input], { env });
}

/** The SDK's own warning text for a deprecated model. */
const DEPRECATION = /deprecated/i;

/** Every model on a DEPRECATED_MODELS list of the installed Anthropic SDK (read as text: it is not exported). */
function sdkDeprecatedModels(): { files: string[]; models: Set<string> } {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('@anthropic-ai/sdk'));
  const files = [
    path.join(root, 'internal/data/deprecated-models.js'),
    path.join(root, 'resources/messages/messages.js'),
  ];
  const models = new Set<string>();
  const seen: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/DEPRECATED_MODELS = \{([^}]*)\}/g)) {
      seen.push(file);
      for (const k of m[1]!.matchAll(/['"]([^'"]+)['"]\s*:/g)) models.add(k[1]!);
    }
  }
  return { files: seen, models };
}

describe('default models', () => {
  it('are the current ones', () => {
    expect(Object.fromEntries(VENDORS.map((v) => [v.id, v.defaultModel]))).toEqual({
      openai: 'gpt-5.4-mini',
      anthropic: 'claude-sonnet-5-5',
    });
  });

  it('are not on the installed Anthropic SDK deprecated list (an SDK update that deprecates one fails here)', () => {
    const { files, models } = sdkDeprecatedModels();
    // The list was found and read: the old default is on it.
    expect(files.length).toBeGreaterThan(0);
    expect(models).toContain('claude-sonnet-4-5');
    expect(models).not.toContain(vendorInfo('anthropic').defaultModel);
    expect(models).not.toContain(vendorInfo('openai').defaultModel);
  });

  it('with only ANTHROPIC_API_KEY: the CLI sends claude-sonnet-5-5 and stderr has no deprecation warning', async () => {
    const env = { ANTHROPIC_API_KEY: 'sk-ant-test-key', ANTHROPIC_BASE_URL: anthropic.baseURL };
    const res = await runHello('What is a hatchery?', env);
    expect(res.stderr).not.toMatch(DEPRECATION);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('What is a hatchery?');
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.requests[0]!.body.model).toBe('claude-sonnet-5-5');
    expect(openai.requests).toHaveLength(0);
  });

  it('the same run with HATCHERY_MODEL=anthropic:claude-sonnet-4-5 shows the SDK warning (so the test can see one)', async () => {
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-test-key',
      ANTHROPIC_BASE_URL: anthropic.baseURL,
      HATCHERY_MODEL: 'anthropic:claude-sonnet-4-5',
    };
    const res = await runHello('hi', env);
    expect(res.code).toBe(0);
    expect(anthropic.requests[0]!.body.model).toBe('claude-sonnet-4-5');
    expect(res.stderr).toMatch(/The model 'claude-sonnet-4-5' is deprecated/);
  });

  it('with OPENAI_API_KEY: the CLI sends gpt-5.4-mini, no temperature and no max field unless the file sets one', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-test-key',
      OPENAI_BASE_URL: openai.baseURL,
      ANTHROPIC_API_KEY: 'sk-ant-test-key',
      ANTHROPIC_BASE_URL: anthropic.baseURL,
    };
    const res = await runHello('hi', env);
    expect(res.stderr).not.toMatch(DEPRECATION);
    expect(res.code).toBe(0);
    // OpenAI's key wins when both are set.
    expect(anthropic.requests).toHaveLength(0);
    const body = openai.requests[0]!.body;
    expect(body.model).toBe('gpt-5.4-mini');
    expect(body.temperature).toBeUndefined();
    expect(body.max_tokens).toBeUndefined();
    expect(body.max_completion_tokens).toBeUndefined();
  });

  it('HATCHERY_MODEL still overrides the default', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-test-key',
      OPENAI_BASE_URL: openai.baseURL,
      HATCHERY_MODEL: 'openai:my-model',
    };
    const res = await runHello('hi', env);
    expect(res.code).toBe(0);
    expect(openai.requests[0]!.body.model).toBe('my-model');
  });

  it('api.openai.com gets max_completion_tokens (gpt-5 models reject max_tokens) and no temperature unless set', async () => {
    // The official host's branch, with the requests routed to the loopback fake.
    const client = new OpenAI({
      apiKey: 'sk-test-key',
      baseURL: 'https://api.openai.com/v1',
      fetch: (url, init) => fetch(String(url).replace('https://api.openai.com/v1', openai.baseURL), init),
    });
    const provider = new OpenAIProvider(client);
    const base = {
      model: vendorInfo('openai').defaultModel,
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    await provider.chat({ ...base, maxTokens: 50, signal: new AbortController().signal });
    const sent = openai.requests[0]!.body;
    expect(sent.model).toBe('gpt-5.4-mini');
    expect(sent.max_completion_tokens).toBe(50);
    expect(sent.max_tokens).toBeUndefined();
    expect(sent.temperature).toBeUndefined();
  });
});
