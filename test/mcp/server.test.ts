import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import {
  droneDef,
  echoDef,
  gatedProvider,
  hatcheryDir,
  inMemory,
  textOf,
  waitFor,
  writeHatchery,
} from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(...args: Parameters<typeof inMemory>) {
  const s = await inMemory(...args);
  cleanups.push(s.close);
  return s;
}

/** The last user message of a request. */
function lastUser(req: ChatRequest): string {
  const m = [...req.messages].reverse().find((x) => x.role === 'user');
  return m && m.role === 'user' ? m.content : '';
}

describe('MCP server (in memory)', () => {
  it('offers one tool per hatchery, the definitions as resources, and instructions naming them', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    writeHatchery(
      dir,
      'sub/story.json',
      droneDef('story', { inputs: { topic: 'What is the story about?' } }),
    );
    const { client } = await setup(dir);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['shout', 'story', 'hatchery_list', 'hatchery_run', 'hatchery_start']),
    );
    const story = tools.find((t) => t.name === 'story')!;
    expect(story.description).toBe('asks the model (story)');
    expect(story.inputSchema.properties).toEqual({
      input: expect.objectContaining({ type: 'string' }),
      topic: { type: 'string', description: 'What is the story about?' },
    });
    expect(story.annotations).toMatchObject({ openWorldHint: true });
    expect(tools.find((t) => t.name === 'shout')!.annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: false,
    });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      'hatchery-graph://shout',
      'hatchery-graph://story',
      'hatchery://shout',
      'hatchery://story',
    ]);
    const read = await client.readResource({ uri: 'hatchery://story' });
    expect(JSON.parse((read.contents[0] as { text: string }).text).name).toBe('story');
    expect(client.getInstructions()).toMatch(/- shout: echoes its input/);
    expect(client.getInstructions()).toMatch(/hatchery_start/);
  });

  it('hides the generic tools with genericTools: false', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    const { client } = await setup(dir, { server: { genericTools: false } });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['shout']);
  });

  it('runs 100 concurrent calls of one hatchery, each with its own ctx', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'two.json', {
      name: 'two',
      desc: 'saves then reads back',
      nodes: [
        { name: 'First', usr_prompt: '{{ ctx.input }}', save_output: 'kept', next: 'Second' },
        {
          name: 'Second',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: '{{ ctx.input }}|{{ ctx.kept }}' },
        },
      ],
    });
    // Replies arrive in a scrambled order, so runs interleave.
    const model = new ScriptedProvider(async (req, i) => {
      await new Promise((r) => setTimeout(r, (i * 7) % 23));
      return `seen ${lastUser(req)}`;
    });
    const { client } = await setup(dir, { providers: { openai: model } });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => client.callTool({ name: 'two', arguments: { input: `n${i}` } })),
    );
    results.forEach((r, i) => {
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toBe(`n${i}|seen n${i}`);
    });
  });

  it('queues calls beyond maxConcurrent', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'ask.json', droneDef('ask'));
    let active = 0;
    let peak = 0;
    const model = new ScriptedProvider(async (req) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 20));
      active--;
      return lastUser(req);
    });
    const { client } = await setup(dir, { providers: { openai: model }, server: { maxConcurrent: 2 } });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.callTool({ name: 'ask', arguments: { input: `q${i}` } })),
    );
    expect(results.map(textOf)).toEqual(Array.from({ length: 8 }, (_, i) => `q${i}`));
    expect(peak).toBe(2);
  });

  it("queues a hatchery's calls beyond its max_concurrent, within the server's limit", async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'solo.json', { ...droneDef('solo'), max_concurrent: 1 });
    writeHatchery(dir, 'free.json', droneDef('free'));
    const active = new Map<string, number>();
    const peak = new Map<string, number>();
    const model = new ScriptedProvider(async (req) => {
      const count = (who: string, by: number) => {
        active.set(who, (active.get(who) ?? 0) + by);
        peak.set(who, Math.max(peak.get(who) ?? 0, active.get(who)!));
      };
      const who = lastUser(req).slice(0, 4);
      count(who, 1);
      count('all', 1);
      await new Promise((r) => setTimeout(r, 20));
      count(who, -1);
      count('all', -1);
      return lastUser(req);
    });
    const { client } = await setup(dir, { providers: { openai: model }, server: { maxConcurrent: 3 } });
    const call = (name: string, i: number) => client.callTool({ name, arguments: { input: `${name}${i}` } });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => [call('solo', i), call('free', i)]).flat(),
    );
    expect(results.every((r) => !r.isError)).toBe(true);
    // solo runs one at a time; free takes the server's other slots (all 3 while solo waits for its own).
    expect(peak.get('solo')).toBe(1);
    expect(peak.get('all')).toBe(3);
    expect(peak.get('free')).toBeGreaterThanOrEqual(2);
  });

  it('sends progress at every node start and finish, and heartbeats during a long model call', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'chain.json', {
      name: 'chain',
      desc: 'two drones',
      nodes: [
        { name: 'Writer', usr_prompt: '{{ ctx.input }}', next: 'Editor' },
        { name: 'Editor', usr_prompt: 'edit {{ out.Writer }}' },
      ],
    });
    const model = new ScriptedProvider(async (req) => {
      await new Promise((r) => setTimeout(r, 300));
      return `ok ${lastUser(req)}`;
    });
    const { client } = await setup(dir, { providers: { openai: model }, server: { heartbeatMs: 50 } });
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'chain', arguments: { input: 'x' } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(textOf(result)).toBe('ok edit ok x');
    const messages = progress.map((p) => p.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'step 1: Writer started',
        expect.stringMatching(/^step 1: Writer done/),
        'step 2: Editor started',
        expect.stringMatching(/^step 2: Editor done/),
      ]),
    );
    expect(messages.filter((m) => /Writer still running/.test(m ?? '')).length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
  });

  it('cancellation aborts the in-flight model call, nested runs included, before it answers', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'inner.json', droneDef('inner'));
    writeHatchery(dir, 'outer.json', {
      name: 'outer',
      desc: 'calls inner',
      nodes: [
        {
          name: 'Call',
          type: 'tool',
          tool_name: 'hatch:inner.json',
          tool_args: { input: '{{ ctx.input }}' },
        },
      ],
    });
    const gated = gatedProvider();
    const { client } = await setup(dir, { providers: { openai: gated.provider } });
    const controller = new AbortController();
    const call = client.callTool({ name: 'outer', arguments: { input: 'slow' } }, undefined, {
      signal: controller.signal,
    });
    await waitFor(() => gated.started.length === 1, 5_000, 'the model call');
    controller.abort();
    await expect(call).rejects.toThrow();
    // The gate is still closed: only the cancellation can end the model call.
    await waitFor(() => gated.aborted.length === 1, 10_000, 'the model call to see the abort');
    expect(gated.aborted[0]).toBe(gated.started[0]);
    gated.release();
  });

  it('asks for a missing declared input through elicitation', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'story.json', {
      name: 'story',
      desc: 'story',
      inputs: { topic: 'What is the story about?', mood: 'Which mood?' },
      nodes: [
        {
          name: 'Tell',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: '{{ ctx.topic }}/{{ ctx.mood }}' },
        },
      ],
    });
    const asked: unknown[] = [];
    const { client } = await setup(dir, {
      client: { capabilities: { elicitation: { form: {} } } },
      setup: (c) =>
        c.setRequestHandler(ElicitRequestSchema, (req) => {
          asked.push(req.params);
          return { action: 'accept', content: { topic: 'owls' } };
        }),
    });
    const r = await client.callTool({ name: 'story', arguments: { mood: 'calm' } });
    expect(textOf(r)).toBe('owls/calm');
    expect(asked).toEqual([
      expect.objectContaining({
        requestedSchema: expect.objectContaining({ required: ['topic'] }),
      }),
    ]);
  });

  it('fails a call with a missing input, naming it, when the client cannot be asked or declines', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'story.json', {
      name: 'story',
      desc: 'story',
      inputs: { topic: 'What is the story about?' },
      nodes: [{ name: 'Tell', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.topic }}' } }],
    });
    const plain = await setup(dir);
    const r = await plain.client.callTool({ name: 'story', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/missing input: topic \(What is the story about\?\)/);
    expect(textOf(r)).toContain(path.join(dir, 'story.json'));
    const declining = await setup(dir, {
      client: { capabilities: { elicitation: {} } },
      setup: (c) => c.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' })),
    });
    const d = await declining.client.callTool({ name: 'story', arguments: {} });
    expect(d.isError).toBe(true);
    expect(textOf(d)).toMatch(/topic.*declined/);
  });

  it("uses the client's model through sampling when no API key is set", async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'ask.json', droneDef('ask'));
    writeHatchery(dir, 'pick.json', {
      name: 'pick',
      desc: 'names a model',
      nodes: [
        {
          name: 'Ask',
          model: 'sampling:claude-sonnet',
          sys_prompt: 'Be brief.',
          max_tokens: 77,
          usr_prompt: '{{ ctx.input }}',
        },
      ],
    });
    const requests: {
      systemPrompt?: string;
      maxTokens: number;
      modelPreferences?: unknown;
      messages: unknown[];
    }[] = [];
    const { client } = await setup(dir, {
      client: { capabilities: { sampling: {} } },
      setup: (c) =>
        c.setRequestHandler(CreateMessageRequestSchema, (req) => {
          requests.push(req.params);
          const last = req.params.messages.at(-1)!.content as { text: string };
          return {
            model: 'client-model',
            role: 'assistant',
            content: { type: 'text', text: `sampled: ${last.text}` },
          };
        }),
    });
    expect(textOf(await client.callTool({ name: 'ask', arguments: { input: 'hi' } }))).toBe('sampled: hi');
    expect(textOf(await client.callTool({ name: 'pick', arguments: { input: 'yo' } }))).toBe('sampled: yo');
    expect(requests[0]).toMatchObject({
      systemPrompt: 'You are a helpful assistant.',
      maxTokens: expect.any(Number),
    });
    expect(requests[1]).toMatchObject({
      systemPrompt: 'Be brief.',
      maxTokens: 77,
      modelPreferences: { hints: [{ name: 'claude-sonnet' }] },
    });
  });

  it('tells a client without sampling which key to set', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'ask.json', droneDef('ask'));
    writeHatchery(
      dir,
      'tooly.json',
      droneDef('tooly', { nodes: [{ name: 'T', model: 'sampling', tools: ['echo'], usr_prompt: 'x' }] }),
    );
    const { client } = await setup(dir);
    const r = await client.callTool({ name: 'ask', arguments: { input: 'hi' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/OPENAI_API_KEY or ANTHROPIC_API_KEY/);
    const sampling = await setup(dir, {
      client: { capabilities: { sampling: {} } },
      setup: (c) =>
        c.setRequestHandler(CreateMessageRequestSchema, () => ({
          model: 'm',
          role: 'assistant',
          content: { type: 'text', text: 'x' },
        })),
    });
    const t = await sampling.client.callTool({ name: 'tooly', arguments: {} });
    expect(t.isError).toBe(true);
    expect(textOf(t)).toMatch(/does not support tool use.*OPENAI_API_KEY/);
  });

  it('reports failures as error results naming file, node and cause, without secrets', async () => {
    const dir = hatcheryDir();
    const file = writeHatchery(dir, 'ask.json', droneDef('ask'));
    const secret = 'sk-test-0123456789abcdef';
    const model = new ScriptedProvider(() => new Error(`upstream exploded (key ${secret})`));
    const { client } = await setup(dir, { providers: { openai: model }, env: { OPENAI_API_KEY: secret } });
    const r = await client.callTool({ name: 'ask', arguments: { input: 'x' } });
    expect(r.isError).toBe(true);
    const text = textOf(r);
    expect(text).toContain(file);
    expect(text).toContain('node "Ask"');
    expect(text).toContain('upstream exploded');
    expect(text).not.toContain(secret);
    const bad = await client.callTool({ name: 'ask', arguments: { input: 3 } });
    expect(textOf(bad)).toMatch(/"input" of ask must be a string/);
    const unknown = await client.callTool({ name: 'nope', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/unknown tool "nope"; available: ask, hatchery_list/);
  });

  it('hatchery_run reaches a hatchery added after the client listed its tools', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'one.json', echoDef('one'));
    const { client, watch } = await setup(dir);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('late');
    writeHatchery(dir, 'late.json', echoDef('late', 'late:', { inputs: { tone: 'Tone?' } }));
    await waitFor(() => watch.listChanged > 0, 10_000, 'list_changed');
    const list = JSON.parse(textOf(await client.callTool({ name: 'hatchery_list', arguments: {} })));
    expect(list.hatcheries.map((h: { name: string }) => h.name)).toEqual(['late', 'one']);
    expect(list.hatcheries[0].inputs).toEqual({ tone: 'Tone?' });
    const r = await client.callTool({
      name: 'hatchery_run',
      arguments: { name: 'late', input: 'hello', inputs: { tone: 'soft' } },
    });
    expect(textOf(r)).toBe('late:hello');
    const missing = await client.callTool({ name: 'hatchery_run', arguments: { name: 'ghost' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/unknown hatchery "ghost"; available: late, one$/);
  });

  it('completes a run longer than the request timeout through hatchery_start and hatchery_result', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', {
      name: 'slow',
      desc: 'slow',
      nodes: [
        { name: 'Think', usr_prompt: '{{ ctx.input }}', next: 'Say' },
        { name: 'Say', usr_prompt: 'say {{ out.Think }}' },
      ],
    });
    const model = new ScriptedProvider(async (req) => {
      await new Promise((r) => setTimeout(r, 600));
      return `ok ${lastUser(req)}`;
    });
    const { client } = await setup(dir, { providers: { openai: model } });
    const timeout = 500;
    await expect(
      client.callTool({ name: 'slow', arguments: { input: 'a' } }, undefined, { timeout }),
    ).rejects.toThrow(/timed out/i);
    const started = await client.callTool(
      { name: 'hatchery_start', arguments: { name: 'slow', input: 'b' } },
      undefined,
      {
        timeout,
      },
    );
    const runId = (started.structuredContent as { run_id: string }).run_id;
    expect(runId).toMatch(/[0-9a-f-]{36}/);
    const status = await client.callTool(
      { name: 'hatchery_status', arguments: { run_id: runId } },
      undefined,
      { timeout },
    );
    expect(status.structuredContent).toMatchObject({
      state: expect.stringMatching(/queued|running/),
      hatchery: 'slow',
    });
    let result: Awaited<ReturnType<typeof client.callTool>> | undefined;
    let stillRunning = 0;
    for (let i = 0; i < 40 && !result; i++) {
      const r = await client.callTool(
        { name: 'hatchery_result', arguments: { run_id: runId, wait_seconds: 0.2 } },
        undefined,
        { timeout },
      );
      if (/running|queued/.test(String((r.structuredContent as { state?: string } | undefined)?.state)))
        stillRunning++;
      else result = r;
    }
    expect(stillRunning).toBeGreaterThan(0);
    expect(textOf(result)).toBe('ok say ok b');
    const done = await client.callTool({ name: 'hatchery_status', arguments: { run_id: runId } });
    expect(done.structuredContent).toMatchObject({
      state: 'succeeded',
      steps: 2,
      outputs: { Think: 'ok b', Say: 'ok say ok b' },
    });
  });

  it('hatchery_cancel stops a background run', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'ask.json', droneDef('ask'));
    const gated = gatedProvider();
    const { client } = await setup(dir, { providers: { openai: gated.provider } });
    const started = await client.callTool({ name: 'hatchery_start', arguments: { name: 'ask', input: 'x' } });
    const runId = (started.structuredContent as { run_id: string }).run_id;
    await waitFor(() => gated.started.length === 1, 5_000, 'the model call');
    const status = await client.callTool({ name: 'hatchery_status', arguments: { run_id: runId } });
    expect(status.structuredContent).toMatchObject({ state: 'running', current_node: 'Ask' });
    const cancelled = await client.callTool({ name: 'hatchery_cancel', arguments: { run_id: runId } });
    expect(cancelled.structuredContent).toMatchObject({ state: 'cancelled' });
    expect(gated.aborted).toHaveLength(1);
    const result = await client.callTool({
      name: 'hatchery_result',
      arguments: { run_id: runId, wait_seconds: 0 },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/cancelled with hatchery_cancel/);
    gated.release();
  });

  it('lets a run in flight finish on the definition it started with', async () => {
    const dir = hatcheryDir();
    const file = writeHatchery(
      dir,
      'ask.json',
      droneDef('ask', { nodes: [{ name: 'Ask', usr_prompt: 'OLD {{ ctx.input }}' }] }),
    );
    const gated = gatedProvider();
    const { client, watch } = await setup(dir, { providers: { openai: gated.provider } });
    const call = client.callTool({ name: 'ask', arguments: { input: 'x' } });
    await waitFor(() => gated.started.length === 1, 5_000, 'the model call');
    writeFileSync(file, readFileSync(file, 'utf8').replace('OLD', 'NEW'));
    await waitFor(() => watch.listChanged > 0, 10_000, 'list_changed');
    gated.release();
    expect(textOf(await call)).toBe('done: OLD x');
    expect(textOf(await client.callTool({ name: 'ask', arguments: { input: 'y' } }))).toBe('done: NEW y');
  });
});
