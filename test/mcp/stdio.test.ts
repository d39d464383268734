import { rmSync, writeFileSync } from 'node:fs';
import { CreateMessageRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findHatcheryFiles } from '../../src/loader/load.js';
import { fakeVendors } from '../fakes/vendors.js';
import { startCli } from '../helpers.js';
import {
  EXAMPLES,
  echoDef,
  fakeEnv,
  hatcheryDir,
  spawnCli,
  textOf,
  waitFor,
  writeHatchery,
} from './helpers.js';

const { openai, anthropic } = fakeVendors();
let env: Record<string, string>;

beforeAll(() => {
  env = fakeEnv(openai.baseURL, anthropic.baseURL);
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
  openai.reset();
});

async function cli(...args: Parameters<typeof spawnCli>) {
  const s = await spawnCli(...args);
  cleanups.push(s.close);
  return s;
}

describe('hatchery-mcp over stdio (built CLI)', () => {
  // One server for the tests that only call the examples: each starts from an idle server and leaves
  // none of its calls running (the slow one of the last test is its own concern).
  let shared: Awaited<ReturnType<typeof spawnCli>>;
  beforeAll(async () => {
    shared = await spawnCli(EXAMPLES, { env });
  });
  afterAll(() => shared.close());

  it('lists the example hatcheries and runs each against the fake model servers', async () => {
    const { client } = shared;
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'hello',
        'read_notes',
        'story_chain',
        'triage_router',
        'unique_lines',
        'hatchery_run',
      ]),
    );
    expect(textOf(await client.callTool({ name: 'hello', arguments: { input: 'hi there' } }))).toBe(
      'echo: hi there',
    );
    const story = await client.callTool({ name: 'story_chain', arguments: { topic: 'cats' } });
    expect(textOf(story)).toMatch(/^echo: Give this story a title.*echo: Write a story about cats\./s);
    const triage = await client.callTool({
      name: 'triage_router',
      arguments: { input: 'Question: how do I log in?' },
    });
    expect(textOf(triage)).toMatch(/^echo: Answer this question briefly/);
    const notes = await client.callTool({ name: 'read_notes', arguments: {} });
    expect(textOf(notes)).toMatch(/^# welcome\.md\n\nWelcome to hatchery-mcp\./);
    const lines = await client.callTool({ name: 'unique_lines', arguments: { input: 'b\na\nb' } });
    expect(textOf(lines)).toBe('a\nb\n\n(2 unique lines)');
    expect(openai.requests.length).toBe(5);
  });

  it('sends progress while a multi-node run is in flight', async () => {
    // The title is held until the client has seen the writer's step end: the run can only finish if
    // that progress reached the client while the run was still in flight.
    let release = () => {};
    const writerSeen = new Promise<void>((r) => {
      release = r;
    });
    openai.enqueue('A story.', async () => {
      await writerSeen;
      return 'Title\nA story.';
    });
    const { client } = shared;
    const seen: Progress[] = [];
    const result = await client.callTool({ name: 'story_chain', arguments: { topic: 'owls' } }, undefined, {
      onprogress: (p) => {
        seen.push(p);
        if (/step 1: Writer done/.test(p.message ?? '')) release();
      },
    });
    expect(textOf(result)).toBe('Title\nA story.');
    expect(seen.map((p) => p.message)).toEqual(expect.arrayContaining(['step 2: Titler started']));
  });

  it('cancellation drops a slow model call before it answers', async () => {
    // The answer would come after the test timeout: only the cancellation can end the request.
    openai.enqueue({ text: 'too late', delayMs: 60_000 });
    const { client } = shared;
    const controller = new AbortController();
    const call = client.callTool({ name: 'hello', arguments: { input: 'wait' } }, undefined, {
      signal: controller.signal,
    });
    await waitFor(() => openai.requests.length === 1, 10_000, 'the model request');
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => openai.disconnects === 1, 10_000, 'the model request to be dropped');
    expect(openai.requests[0]!.disconnected).toBe(true);
  });

  it('answers 100 concurrent calls with their own results', async () => {
    const { client } = shared;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        client.callTool({ name: 'hello', arguments: { input: `call ${i}` } }),
      ),
    );
    expect(results.map(textOf)).toEqual(Array.from({ length: 100 }, (_, i) => `echo: call ${i}`));
  });

  it('completes a run longer than the request timeout with hatchery_start and hatchery_result', async () => {
    const { client } = shared;
    // Each model reply takes 1.2 s; the first call gives up after 0.5 s, every later request after 1 s.
    openai.enqueue({ text: 'slow one', delayMs: 1_200 });
    await expect(
      client.callTool({ name: 'hello', arguments: { input: 'x' } }, undefined, { timeout: 500 }),
    ).rejects.toThrow(/timed out/i);
    expect(openai.requests.length).toBe(1);
    openai.enqueue({ text: 'slow two', delayMs: 1_200 });
    const started = await client.callTool(
      { name: 'hatchery_start', arguments: { name: 'hello', input: 'y' } },
      undefined,
      { timeout: 1_000 },
    );
    const runId = (started.structuredContent as { run_id: string }).run_id;
    let text = '';
    for (let i = 0; i < 50 && !text; i++) {
      const r = await client.callTool(
        { name: 'hatchery_result', arguments: { run_id: runId, wait_seconds: 0.4 } },
        undefined,
        { timeout: 1_000 },
      );
      if (!/running|queued/.test(String((r.structuredContent as { state?: string } | undefined)?.state)))
        text = textOf(r);
    }
    expect(text).toBe('slow two');
  });
});

describe('hatchery-mcp over stdio, a server of its own per test', () => {
  it("uses the client's model through sampling when no API key is set", async () => {
    const { client } = await cli(EXAMPLES, {
      env: {},
      client: { capabilities: { sampling: {} } },
      setup: (c) =>
        c.setRequestHandler(CreateMessageRequestSchema, (req) => ({
          model: 'client-model',
          role: 'assistant',
          content: { type: 'text', text: `sampled (${req.params.maxTokens} tokens max)` },
        })),
    });
    const r = await client.callTool({ name: 'hello', arguments: { input: 'hi' } });
    expect(textOf(r)).toMatch(/^sampled \(\d+ tokens max\)$/);
  });

  it('reloads edited files while connected: list_changed, errors as log messages and on stderr', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'one.json', echoDef('one'));
    const { client, watch, stderr } = await cli(dir, { env });
    const names = async () =>
      (await client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('hatchery_'));
    expect(await names()).toEqual(['one']);
    const file = writeHatchery(dir, 'two.json', echoDef('two', '2:'));
    await waitFor(
      async () => watch.listChanged > 0 && (await names()).includes('two'),
      10_000,
      'the new tool',
    );
    writeFileSync(file, '{"name": "two", "desc": "broken", "nodes": [');
    await waitFor(() => watch.logs.some((l) => l.includes(file)), 10_000, 'the error as a log message');
    expect(stderr()).toContain(file);
    expect(textOf(await client.callTool({ name: 'two', arguments: { input: 'x' } }))).toBe('2:x');
    writeHatchery(dir, 'two.json', echoDef('two', 'fixed:'));
    await waitFor(
      async () => textOf(await client.callTool({ name: 'two', arguments: { input: 'x' } })) === 'fixed:x',
      10_000,
      'the fixed version',
    );
    const before = watch.listChanged;
    rmSync(file);
    await waitFor(
      async () => watch.listChanged > before && !(await names()).includes('two'),
      10_000,
      'removal',
    );
  });
});

/** The CLI with raw pipes, in a clean environment plus `env`. */
const raw = (args: string[], env: Record<string, string> = {}) => startCli(args, { env });

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('hatchery-mcp process behaviour', () => {
  it('prints help and version, and refuses bad flags and missing folders', async () => {
    // Independent processes: started together, checked one by one.
    const [help, version, bad, missing, port, sessions, bytes] = [
      raw(['serve', '--help']),
      raw(['serve', '--version']),
      raw(['--bogus']),
      raw(['--dir', '/nonexistent/hatchery-folder']),
      raw(['--http', 'localhost:99999']),
      raw(['--dir', EXAMPLES, '--max-sessions', '3']),
      raw(['--dir', EXAMPLES, '--max-result-bytes', 'lots']),
    ];
    expect(await help!.exit).toBe(0);
    expect(help!.out()).toMatch(/--http \[HOST:\]PORT/);
    expect(help!.out()).toMatch(/--no-generic-tools/);
    expect(await version!.exit).toBe(0);
    expect(version!.out().trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(await bad!.exit).toBe(2);
    expect(bad!.err()).toMatch(/bogus/);
    expect(await missing!.exit).toBe(2);
    expect(missing!.err()).toMatch(/no such folder/);
    expect(await port!.exit).toBe(2);
    expect(await sessions!.exit).toBe(2);
    expect(sessions!.err()).toMatch(/--max-sessions only applies with --http/);
    expect(await bytes!.exit).toBe(2);
    expect(bytes!.err()).toMatch(/--max-result-bytes must be a positive integer/);
  });

  it('writes only protocol messages to stdout and exits when stdin closes', async () => {
    const p = raw(['--dir', EXAMPLES]);
    p.child.stdin.write(`${INIT}\n`);
    p.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    p.child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_notes', arguments: {} } })}\n`,
    );
    await waitFor(() => p.out().includes('"id":1'), 10_000, 'the tool result');
    p.child.stdin.end();
    expect(await p.exit).toBe(0);
    for (const line of p.out().trim().split('\n')) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    const count = (await findHatcheryFiles(EXAMPLES)).length;
    expect(p.err()).toContain(`serving ${count} hatcheries`);
  });

  it('shuts down on SIGTERM, cancelling runs in flight', async () => {
    // The answer would come after the test timeout: a server waiting for it would not exit in time.
    openai.enqueue({ text: 'never', delayMs: 60_000 });
    const p = raw(['--dir', EXAMPLES], env);
    p.child.stdin.write(`${INIT}\n`);
    p.child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hello', arguments: { input: 'x' } } })}\n`,
    );
    await waitFor(() => openai.requests.length === 1, 10_000, 'the model request');
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    expect(p.err()).toMatch(/shutting down \(SIGTERM\)/);
    await waitFor(() => openai.disconnects === 1, 10_000, 'the model request to be dropped');
  });
});
