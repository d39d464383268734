import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { AnthropicProvider } from '../../src/providers/anthropic.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import type { ChatRequest, Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import type { FakeReply, FakeServer } from '../fakes/http.js';
import { fakeVendors } from '../fakes/vendors.js';
import { CLI_PATH, load, TEST_STATE, tempDir } from '../helpers.js';
import { chatRequest, failure } from '../providers/helpers.js';

const KEY = 'sk-test-SECRET0123456789abcdef';

const { openai, anthropic } = fakeVendors();

/** Both vendors through their real SDKs, each against its fake server (SDK default of 2 retries). */
const vendors: {
  name: string;
  fake: FakeServer;
  make: () => Provider;
  path: string;
  model: string;
}[] = [
  {
    name: 'OpenAI',
    fake: openai,
    make: () => new OpenAIProvider(new OpenAI({ apiKey: KEY, baseURL: openai.baseURL, maxRetries: 2 })),
    path: '/v1/chat/completions',
    model: 'openai:gpt-test',
  },
  {
    name: 'Anthropic',
    fake: anthropic,
    make: () =>
      new AnthropicProvider(new Anthropic({ apiKey: KEY, baseURL: anthropic.baseURL, maxRetries: 2 })),
    path: '/v1/messages',
    model: 'anthropic:claude-test',
  },
];

/** A 429 asking to come back in `seconds` (retry-after only: the fakes' default retry-after-ms is dropped). */
const rateLimited = (seconds: number): FakeReply => ({
  status: 429,
  message: 'rate limited',
  headers: { 'retry-after': String(seconds), 'retry-after-ms': '' },
});

const request = (extra: Partial<ChatRequest> = {}) => chatRequest('m', extra);

beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

describe.each(vendors)('$name: the timeout bounds the whole call, retries included', (v) => {
  it('retry-after 10 s with a 2000 ms timeout ends with TIMEOUT at once instead of after 20 s', async () => {
    v.fake.enqueue(rateLimited(10), rateLimited(10), rateLimited(10));
    const err = await failure(v.make().chat(request({ timeoutMs: 2000 })));
    expect(err).toBeInstanceOf(HatcheryError);
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain(`${v.name} call timed out after 2000 ms`);
    expect(err.message).toContain('429');
    // Refused before waiting: the message says the retry would start too late, and none was made.
    expect(err.message).toContain('10 s');
    expect(err.message).toContain('later than the timeout allows');
    expect(v.fake.requests).toHaveLength(1);
    expect(v.fake.pending).toBe(2);
  });

  it('short retry waits still count against the timeout', async () => {
    const wait = { status: 503, headers: { 'retry-after-ms': '400' } };
    v.fake.enqueue(wait, wait, wait, wait, wait, wait);
    const p = v.make();
    const client = (p as unknown as { client: { maxRetries: number } }).client;
    client.maxRetries = 10;
    const err = await failure(p.chat(request({ timeoutMs: 1000 })));
    expect(err.code).toBe('TIMEOUT');
    // 0, 400, 800 ms: a fourth attempt would start after the deadline.
    expect(v.fake.requests.length).toBeLessThanOrEqual(3);
  });

  it('a retry that fits in the timeout is made', async () => {
    v.fake.enqueue({ status: 429, headers: { 'retry-after-ms': '100' } }, 'second time lucky');
    const res = await v.make().chat(request({ timeoutMs: 2000 }));
    expect(res.text).toBe('second time lucky');
    expect(v.fake.requests).toHaveLength(2);
  });

  it('cancelling during a retry wait ends the call at once', async () => {
    v.fake.enqueue(rateLimited(10), 'never sent');
    const ctrl = new AbortController();
    const p = failure(v.make().chat(request({ signal: ctrl.signal })));
    await vi.waitFor(() => expect(v.fake.requests).toHaveLength(1));
    ctrl.abort();
    // Ended inside the 10 s wait (the test's own timeout is less), the retry never sent.
    const err = await p;
    expect(err.code).toBe('ABORTED');
    expect(v.fake.requests).toHaveLength(1);
    expect(v.fake.pending).toBe(1);
  });

  it('Ctrl-C during a retry wait ends the CLI process (exit 130)', async () => {
    v.fake.enqueue(rateLimited(10), rateLimited(10), rateLimited(10));
    const dir = tempDir();
    const file = path.join(dir, 'ask.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'ask', desc: 'd', model: v.model, nodes: [{ usr_prompt: 'hi' }] }),
    );
    const child = spawn(process.execPath, [CLI_PATH, 'run', file, '-q'], {
      env: {
        PATH: process.env.PATH ?? '',
        HATCHERY_STATE: TEST_STATE,
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: openai.baseURL,
        ANTHROPIC_API_KEY: KEY,
        ANTHROPIC_BASE_URL: anthropic.baseURL,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await vi.waitFor(() => expect(v.fake.requests).toHaveLength(1), { timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGINT');
      const code = await exited;
      expect(code).toBe(130);
      // Before the fix the process printed "cancelled" and lived on through the 10 s wait to retry.
      expect(v.fake.requests).toHaveLength(1);
      expect(v.fake.pending).toBe(2);
      expect(stderr).toMatch(/cancel/);
      expect(stderr).not.toContain(KEY);
    } finally {
      child.kill('SIGKILL');
    }
  }, 20_000);
});

describe.each(vendors)('$name: a 200 reply of the wrong shape is an error', (v) => {
  const html = '<html><head><title>Welcome to nginx!</title></head><body>It works</body></html>';
  const wrong: [string, FakeReply][] = [
    ['an HTML page', { status: 200, raw: html }],
    ['an empty object', { status: 200, body: {} }],
    ['no choices or content', { status: 200, body: { choices: [], content: 'nope' } }],
  ];

  it.each(wrong)('%s (not streamed) names the endpoint and what came back', async (_, reply) => {
    v.fake.enqueue(reply);
    const err = await failure(v.make().chat(request()));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain(`the model endpoint ${v.fake.url}${v.path} returned 200`);
    expect(err.message).toContain('check base_url');
    if (typeof (reply as { raw?: string }).raw === 'string')
      expect(err.message).toContain('text/html: "<html>');
    expect(err.message).not.toContain(KEY);
  });

  it.each(wrong)('%s (streamed) names the endpoint', async (_, reply) => {
    v.fake.enqueue(reply);
    const err = await failure(v.make().chat(request({ stream: true })));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain(`${v.fake.url}${v.path}`);
  });

  it('in a run, the error names the node and the endpoint', async () => {
    v.fake.enqueue({ status: 200, raw: html });
    const h = load({ name: 'ask', desc: 'd', model: v.model, nodes: [{ name: 'Ask', usr_prompt: 'hi' }] });
    const provider = v.make();
    const runtime = new Runtime({ env: {}, providers: { openai: provider, anthropic: provider } });
    const err = (await runtime.run(h).catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('PROVIDER');
    expect(String(err)).toContain('node "Ask"');
    expect(String(err)).toContain(`${v.fake.url}${v.path}`);
  });
});
