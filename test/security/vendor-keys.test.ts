/**
 * A vendor's key goes only to that vendor: a node's own base_url gets neither OPENAI_API_KEY nor
 * ANTHROPIC_API_KEY, only the key variable the node names in api_key_env; through the built CLI
 * and the real SDKs, against fake servers that record the headers they receive.
 */
import { describe, expect, it } from 'vitest';
import type { FakeAnthropic } from '../fakes/fake-anthropic.js';
import type { FakeOpenAI } from '../fakes/fake-openai.js';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli } from '../helpers.js';
import { hatcheryDir, writeHatchery } from '../mcp/helpers.js';

const OPENAI_KEY = 'sk-openai-secret-0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-secret-0123456789abcdef';
const OWN_KEY = 'gsk-own-key-0123456789abcdef';
const { openai, anthropic } = fakeVendors();

const env = { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, GROQ_API_KEY: OWN_KEY };

/** Every header value the fake received, as one text. */
const sent = (fake: FakeOpenAI | FakeAnthropic) => JSON.stringify(fake.requests.map((r) => r.headers));

async function runNode(node: Record<string, unknown>): Promise<void> {
  const dir = hatcheryDir();
  const file = writeHatchery(dir, 'k.json', {
    name: 'k',
    desc: 'asks',
    nodes: [{ name: 'A', usr_prompt: 'hi', ...node }],
  });
  const r = await runCli(['run', file, '--input', 'x'], { env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('answer');
}

describe('vendor keys', () => {
  it('a base_url of its own gets no vendor key, OpenAI or Anthropic', async () => {
    openai.reset();
    openai.enqueue({ text: 'answer' });
    await runNode({ model: 'gpt-4o-mini', base_url: `${openai.url}/v1` });
    anthropic.reset();
    anthropic.enqueue({ text: 'answer' });
    await runNode({ model: 'claude-sonnet-4-5', base_url: anthropic.url });
    for (const fake of [openai, anthropic]) {
      expect(fake.requests.length).toBe(1);
      expect(sent(fake)).not.toContain(OPENAI_KEY);
      expect(sent(fake)).not.toContain(ANTHROPIC_KEY);
    }
  });

  it('api_key_env sends the key the node names, and only it', async () => {
    openai.reset();
    openai.enqueue({ text: 'answer' });
    await runNode({ model: 'gpt-4o-mini', base_url: `${openai.url}/v1`, api_key_env: 'GROQ_API_KEY' });
    expect(openai.requests[0]?.headers.authorization).toBe(`Bearer ${OWN_KEY}`);
    expect(sent(openai)).not.toContain(OPENAI_KEY);
    anthropic.reset();
    anthropic.enqueue({ text: 'answer' });
    await runNode({ model: 'claude-sonnet-4-5', base_url: anthropic.url, api_key_env: 'GROQ_API_KEY' });
    expect(sent(anthropic)).toContain(OWN_KEY);
    expect(sent(anthropic)).not.toContain(ANTHROPIC_KEY);
  });

  it('a base URL the user sets in the environment (OPENAI_BASE_URL) still gets the vendor key', async () => {
    openai.reset();
    openai.enqueue({ text: 'answer' });
    const dir = hatcheryDir();
    const file = writeHatchery(dir, 'k.json', {
      name: 'k',
      desc: 'asks',
      nodes: [{ name: 'A', model: 'gpt-4o-mini', usr_prompt: 'hi' }],
    });
    const r = await runCli(['run', file, '--input', 'x'], {
      env: { ...env, OPENAI_BASE_URL: `${openai.url}/v1` },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(openai.requests[0]?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('a named key variable that is not set is a MISSING_API_KEY error naming it', async () => {
    const dir = hatcheryDir();
    const file = writeHatchery(dir, 'k.json', {
      name: 'k',
      desc: 'asks',
      nodes: [
        {
          name: 'A',
          model: 'gpt-4o-mini',
          usr_prompt: 'hi',
          base_url: `${openai.url}/v1`,
          api_key_env: 'NOT_SET_KEY',
        },
      ],
    });
    const r = await runCli(['run', file, '--input', 'x'], { env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('NOT_SET_KEY');
  });

  it('a 401 from a base_url that got no key says so and how to name one; with a key, to check it', async () => {
    const dir = hatcheryDir();
    const node = { name: 'A', model: 'gpt-4o-mini', usr_prompt: 'hi', base_url: `${openai.url}/v1` };
    const noKey = writeHatchery(dir, 'k.json', { name: 'k', desc: 'asks', nodes: [node] });
    openai.reset();
    openai.enqueue({ status: 401, message: 'Invalid API key' });
    const r = await runCli(['run', noKey, '--input', 'x'], { env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('401');
    expect(r.stderr).toContain(`no API key was sent to ${openai.url}/v1`);
    expect(r.stderr).toContain('api_key_env');
    expect(r.stderr).not.toContain(OPENAI_KEY);
    const named = writeHatchery(dir, 'n.json', {
      name: 'n',
      desc: 'asks',
      nodes: [{ ...node, api_key_env: 'GROQ_API_KEY' }],
    });
    openai.reset();
    openai.enqueue({ status: 401, message: 'Invalid API key' });
    const r2 = await runCli(['run', named, '--input', 'x'], { env });
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toContain('check the API key');
    expect(r2.stderr).not.toContain('no API key was sent');
    expect(r2.stderr).not.toContain(OWN_KEY);
  });
});
