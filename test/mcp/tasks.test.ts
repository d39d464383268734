/**
 * The tasks extension (io.modelcontextprotocol/tasks) on 2026-07-28 requests, driven by the spec
 * client of tasks-client.ts against the server's own sessions, a real run journal and the SDK's
 * per-request HTTP handler, served in-process (the URL is never dialed).
 */
import path from 'node:path';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { HatcheryMcpServer, type HatcheryServerOptions } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, tempDir } from '../helpers.js';
import { droneDef, echoDef, gatedProvider, hatcheryDir, textOf, waitFor, writeHatchery } from './helpers.js';
import { TASKS_EXTENSION, TasksClient } from './tasks-client.js';

const URL_ = 'http://tasks.test/mcp';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A server core on `dir` with a journal in `state`, served per request through the SDK's HTTP handler. */
async function serve(
  dir: string,
  opts: {
    provider?: Provider;
    store?: FileRunStore;
    env?: Record<string, string>;
    server?: Partial<HatcheryServerOptions>;
    journal?: boolean;
  } = {},
) {
  const state = path.join(tempDir('hatchery-tasks-state-'), 'runs');
  const store = opts.journal === false ? undefined : (opts.store ?? new FileRunStore(state, { pollMs: 50 }));
  const runtime = new Runtime({
    providers: opts.provider ? { openai: opts.provider } : {},
    env: opts.env ?? {},
    store,
  });
  const core = await HatcheryMcpServer.start({
    dir,
    runtime,
    watch: false,
    log: process.env.DEBUG_MCP ? (l) => console.error(l) : () => {},
    ...opts.server,
  });
  // The server's own sessions, one per request, as `serve --http` builds them for 2026 clients.
  const handler = createMcpHandler(() => core.createSession().server);
  closers.push(async () => {
    await core.close();
    // A shared store is closed by its first owner.
    if (!opts.store) await runtime.close();
  });
  const client = (declare = true, capabilities?: Record<string, unknown>) =>
    new TasksClient({ url: URL_, fetch: (r) => handler.fetch(r), declare, capabilities });
  return {
    core,
    runtime,
    store,
    client: client(),
    plain: client(false),
    // Takes forms too: missing inputs come back as input_required before any task.
    forms: client(true, { elicitation: {} }),
  };
}

function askDef(name = 'pick') {
  return {
    name,
    desc: 'asks for a color',
    nodes: [
      {
        name: 'Q',
        type: 'ask',
        question: 'Which color for {{ ctx.input }}?',
        choices: ['red', 'blue'],
        next: 'Echo',
      },
      echo('Echo', 'picked {{ out.Q }}'),
    ],
  };
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('tasks extension', () => {
  it('advertises the extension, and a quick run answers with its normal result', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', 'hi '));
    const { client } = await serve(dir);
    const caps = (await client.discover()).capabilities as { extensions?: Record<string, unknown> };
    expect(caps.extensions?.[TASKS_EXTENSION]).toEqual({});
    const r = await client.callTool('shout', { input: 'you' });
    expect(r.resultType).toBe('complete');
    expect(r.taskId).toBeUndefined();
    expect(textOf(r)).toBe('hi you');
  });

  it('offers no tasks without a run journal (a task is a durable run)', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    const { client } = await serve(dir, { journal: false, server: { taskWaitMs: 0 } });
    const caps = (await client.discover()).capabilities as { extensions?: Record<string, unknown> };
    expect(caps.extensions?.[TASKS_EXTENSION]).toBeUndefined();
    expect((await client.callTool('shout', { input: 'x' })).resultType).toBe('complete');
    expect((await client.request('tasks/get', { taskId: crypto.randomUUID() })).error?.code).toBe(-32601);
  });

  it('--task-wait 0: every call is a task, durable at once, polled to completed with the normal result', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', 'hi '));
    const { client, plain } = await serve(dir, { server: { taskWaitMs: 0 } });
    const created = await client.callTool('shout', { input: 'task' });
    expect(created).toMatchObject({ resultType: 'task', status: expect.stringMatching(/working|completed/) });
    const id = created.taskId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.createdAt).toMatch(ISO);
    expect(created.lastUpdatedAt).toMatch(ISO);
    expect(Number.isInteger(created.ttlMs) && (created.ttlMs as number) > 0).toBe(true);
    expect(Number.isInteger(created.pollIntervalMs)).toBe(true);
    for (const legacy of ['ttl', 'pollInterval', 'task']) expect(created).not.toHaveProperty(legacy);
    // Strong consistency: the id resolves at once.
    expect((await client.getTask(id)).taskId).toBe(id);
    const done = await client.poll(id);
    expect(done).toMatchObject({ resultType: 'complete', taskId: id, status: 'completed' });
    expect(textOf(done.result)).toBe('hi task');
    expect(done.result?.isError).toBeUndefined();
    expect(done.result?._meta).toHaveProperty(['hatchery/usage']);
    // A client that does not declare the extension never gets a task, whatever the wait.
    const direct = await plain.callTool('shout', { input: 'plain' });
    expect(direct.resultType).toBe('complete');
    expect(textOf(direct)).toBe('hi plain');
  });

  it('refuses tasks/* from a request that does not declare the extension (-32021)', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    const { client, plain } = await serve(dir, { server: { taskWaitMs: 0 } });
    const id = (await client.callTool('shout', { input: 'x' })).taskId as string;
    for (const [method, params] of [
      ['tasks/get', { taskId: id }],
      ['tasks/update', { taskId: id, inputResponses: {} }],
      ['tasks/cancel', { taskId: id }],
    ] as const) {
      const r = await plain.request(method, params);
      expect(r.error?.code, method).toBe(-32021);
      expect(r.error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
    // The removed 2025 methods are not there.
    expect((await client.request('tasks/result', { taskId: id })).error?.code).toBe(-32601);
    expect((await client.request('tasks/list', {})).error?.code).toBe(-32601);
  });

  it('a run outliving the wait becomes a working task; tasks/cancel stops its model call and the journal says cancelled', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', droneDef('slow'));
    const gated = gatedProvider();
    const { client, store } = await serve(dir, { provider: gated.provider, server: { taskWaitMs: 50 } });
    const created = await client.callTool('slow', { input: 'go' });
    expect(created.resultType).toBe('task');
    const id = created.taskId as string;
    await waitFor(() => gated.started.length === 1, 5_000, 'the model call');
    const working = await client.getTask(id);
    expect(working.status).toBe('working');
    expect(working.statusMessage).toMatch(/slow: running node "Ask"/);
    expect(working).not.toHaveProperty('result');
    expect(await client.cancelTask(id)).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    expect(gated.aborted).toHaveLength(1);
    expect((await client.poll(id)).status).toBe('cancelled');
    expect((await store!.read(id))?.summary.status).toBe('cancelled');
    // Cancelling a finished task is acknowledged and changes nothing.
    expect((await client.request('tasks/cancel', { taskId: id })).result).toBeDefined();
    expect((await client.getTask(id)).status).toBe('cancelled');
    gated.release();
  });

  it('a failed run is a completed task whose result has isError (failed is for protocol errors)', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'down.json', droneDef('down'));
    const model = new ScriptedProvider(() => new Error('model down'));
    const { client } = await serve(dir, { provider: model, server: { taskWaitMs: 0 } });
    const id = (await client.callTool('down', { input: 'x' })).taskId as string;
    const done = await client.poll(id);
    expect(done.status).toBe('completed');
    expect(done.result?.isError).toBe(true);
    expect(textOf(done.result)).toMatch(/model down/);
  });

  it('an ask node makes the task input_required; tasks/update answers it and the run completes', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', askDef());
    // A client that declares forms: the question is its task's form.
    const { forms: client } = await serve(dir);
    // The run suspends at once: no need to wait out the task wait to hand over the task.
    const created = await client.callTool('pick', { input: 'the bike' });
    expect(created).toMatchObject({ resultType: 'task', status: 'input_required' });
    const id = created.taskId as string;
    const waiting = await client.getTask(id);
    expect(waiting.status).toBe('input_required');
    expect(waiting.statusMessage).toBe('node "Q" asks: Which color for the bike?');
    expect(waiting.inputRequests).toEqual({
      'ask-1': {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Which color for the bike?',
          requestedSchema: {
            type: 'object',
            properties: { answer: { type: 'string', title: 'Answer', enum: ['red', 'blue'] } },
            required: ['answer'],
          },
        },
      },
    });
    // Keys that are not outstanding are ignored: the task still waits.
    await client.updateTask(id, { 'ask-7': { action: 'accept', content: { answer: 'red' } } });
    expect((await client.getTask(id)).status).toBe('input_required');
    // A malformed response to the outstanding key is an invalid-params error.
    const bad = await client.request('tasks/update', { taskId: id, inputResponses: { 'ask-1': 'blue' } });
    expect(bad.error?.code).toBe(-32602);
    expect(
      await client.updateTask(id, { 'ask-1': { action: 'accept', content: { answer: 'BLUE' } } }),
    ).toMatchObject({
      resultType: 'complete',
    });
    const done = await client.poll(id);
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('picked blue');
    // One task, one creation time: the same in every poll, before and after the answer resumed the run.
    expect(new Set([created.createdAt, waiting.createdAt, done.createdAt]).size).toBe(1);
    // An update of a task that waits for nothing is acknowledged and ignored.
    await client.updateTask(id, { 'ask-1': { action: 'accept', content: { answer: 'red' } } });
    expect(textOf((await client.getTask(id)).result)).toBe('picked blue');
  });

  it('a client without forms gets no form: the answerable result at once, or as its completed task', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', askDef());
    // The run suspends within the task wait: the call answers with the result, not a task.
    const quick = (await serve(dir)).client;
    const direct = await quick.callTool('pick', { input: 'a boat' });
    expect(direct.resultType).toBe('complete');
    expect(direct.isError).toBe(true);
    expect(textOf(direct)).toMatch(
      /^INPUT_REQUIRED: node "Q" asks: Which color for a boat\?\nchoices: red, blue\nrun id: /,
    );
    // --task-wait 0: the call is a task at once; when its run asks, the task completes with that result.
    const { client } = await serve(dir, { server: { taskWaitMs: 0 } });
    const id = (await client.callTool('pick', { input: 'a kite' })).taskId as string;
    const waiting = await client.poll(id);
    expect(waiting.status).toBe('completed');
    expect(waiting.inputRequests).toBeUndefined();
    expect(waiting.statusMessage).toContain(`hatchery_respond {"run_id": "${id}"`);
    expect(waiting.result?.isError).toBe(true);
    expect(textOf(waiting.result)).toContain(
      `hatchery_respond tool: {"run_id": "${id}", "answer": "<your answer>"}`,
    );
    const answered = await client.callTool('hatchery_respond', { run_id: id, answer: 'red' });
    expect(answered.isError).toBeFalsy();
    const done = await client.callTool('hatchery_result', { run_id: id, wait_seconds: 10 });
    expect(textOf(done)).toBe('picked red');
    expect(textOf((await client.poll(id)).result)).toBe('picked red');
  });

  it('a wrong answer asks again under a new key; a declined question ends the task with the error result', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', askDef());
    const { forms: client } = await serve(dir);
    const id = (await client.callTool('pick', { input: 'a car' })).taskId as string;
    await client.updateTask(id, { 'ask-1': { action: 'accept', content: { answer: 'green' } } });
    const again = await client.poll(id, ['input_required']);
    expect(again.status).toBe('input_required');
    expect(Object.keys(again.inputRequests ?? {})).toEqual(['ask-2']);
    expect(again.statusMessage).toMatch(/"green" is not one of the choices/);
    await client.updateTask(id, { 'ask-2': { action: 'decline' } });
    const done = await client.poll(id);
    expect(done.status).toBe('completed');
    expect(done.result?.isError).toBe(true);
    expect(textOf(done.result)).toMatch(/declined/);
  });

  it('answers unknown, malformed, foreign and non-task ids with -32602 and never touches a path', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout'));
    const other = await serve(dir, { server: { taskWaitMs: 0 } });
    const foreign = (await other.client.callTool('shout', { input: 'x' })).taskId as string;
    await other.client.poll(foreign);
    const { client, core } = await serve(dir, { server: { taskWaitMs: 0 } });
    // A run of the same store that is not a task (a plain tools/call of a non-declaring client).
    const plainRun = await core.runtime.run(core.registry.get('shout')!.hatchery, {
      input: 'y',
      source: 'mcp',
    });
    const ids = [crypto.randomUUID(), '../../etc/passwd', 'x'.repeat(5000), foreign, plainRun.runId, ''];
    for (const taskId of ids) {
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
        const params = method === 'tasks/update' ? { taskId, inputResponses: {} } : { taskId };
        const r = await client.request(method, params);
        expect(r.error?.code, `${method} ${taskId.slice(0, 40)}`).toBe(-32602);
        expect(r.error?.message.length ?? 0).toBeLessThan(1200);
      }
    }
    const r = await client.request('tasks/get', { taskId: 42 }, { headers: { 'mcp-name': '42' } });
    expect(r.error?.code).toBe(-32602);
  });

  it('a task is the journal run: a second server on the same store reads it from the journal and cancels it', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'slow.json', droneDef('slow'));
    const gated = gatedProvider();
    const first = await serve(dir, { provider: gated.provider, server: { taskWaitMs: 0 } });
    const id = (await first.client.callTool('slow', { input: 'go' })).taskId as string;
    await waitFor(() => gated.started.length === 1, 5_000, 'the model call');
    // Same process, so the same store object (another process's would see this one's runs as its
    // own orphans); the CLI test runs two processes.
    const second = await serve(dir, { store: first.store });
    const seen = await second.client.getTask(id);
    expect(seen.status).toBe('working');
    expect(seen.createdAt).toMatch(ISO);
    await second.client.cancelTask(id);
    await waitFor(() => gated.aborted.length === 1, 5_000, 'the cancel to reach the owner');
    expect((await second.client.poll(id)).status).toBe('cancelled');
    expect((await first.client.getTask(id)).status).toBe('cancelled');
    gated.release();
  });

  it('a secret the run saw never reaches tasks/get, from memory or from the journal', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'leak.json', droneDef('leak'));
    const secret = 'tok-0123456789abcdef-SECRET';
    const model = new ScriptedProvider(() => `the key is ${secret}`);
    const env = { SERVICE_API_KEY: secret };
    const first = await serve(dir, { provider: model, env, server: { taskWaitMs: 0 } });
    const id = (await first.client.callTool('leak', { input: 'x' })).taskId as string;
    const live = await first.client.poll(id);
    expect(textOf(live.result)).toBe('the key is [redacted]');
    const second = await serve(dir, { store: first.store, env });
    const stored = await second.client.getTask(id);
    expect(stored.status).toBe('completed');
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(textOf(stored.result)).toBe('the key is [redacted]');
  });

  it('two answers to the same question at once resume the run once', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', askDef());
    const { forms: client, store } = await serve(dir);
    const id = (await client.callTool('pick', { input: 'a kite' })).taskId as string;
    const answers = await Promise.all(
      ['red', 'blue'].map((answer) =>
        client.request('tasks/update', {
          taskId: id,
          inputResponses: { 'ask-1': { action: 'accept', content: { answer } } },
        }),
      ),
    );
    for (const a of answers) expect(a.error).toBeUndefined();
    const done = await client.poll(id);
    expect(textOf(done.result)).toMatch(/^picked (red|blue)$/);
    expect((await store!.read(id))?.summary.attempts).toBe(2);
  });

  it('a client with forms is asked for missing inputs first (input_required), then its call becomes a task', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'story.json', {
      name: 'story',
      desc: 'story',
      inputs: { topic: 'What is the story about?' },
      nodes: [echo('Tell', 'a story about {{ ctx.topic }}')],
    });
    const { forms } = await serve(dir, { server: { taskWaitMs: 0 } });
    const first = await forms.callTool('story', {});
    expect(first.resultType).toBe('input_required');
    expect(first.taskId).toBeUndefined();
    const requests = first.inputRequests as Record<string, { method: string }>;
    const [key] = Object.keys(requests);
    expect(requests[key!]!.method).toBe('elicitation/create');
    const retried = await forms.ok('tools/call', {
      name: 'story',
      arguments: {},
      inputResponses: { [key!]: { action: 'accept', content: { topic: 'cats' } } },
      ...(first.requestState ? { requestState: first.requestState } : {}),
    });
    expect(retried.resultType).toBe('task');
    const done = await forms.poll(retried.taskId as string);
    expect(textOf(done.result)).toBe('a story about cats');
  });
});
