/**
 * Issue 36, points 4 and 5, through the built CLI. A run id is the capability to read, answer and
 * cancel a run: hatchery_runs lists to an HTTP session only the runs it started (every run only with
 * --list-all-runs). A server knows only runs of files it serves: a CLI run of a file outside the
 * served folder, sharing its state folder, is an unknown run to every MCP run tool, and its
 * remaining script never runs through the server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { runCli, startCli, tempDir } from '../helpers.js';
import { CLI, echoDef, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';
import { TasksClient } from '../mcp/tasks-client.js';

const children = new Set<ChildProcess>();
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
});

/** No model is called here: a key that points nowhere. */
const ENV = { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', HATCHERY_MODEL: 'openai:x' };

/** The built CLI serving `dir` over HTTP with its journal in `state`; resolves with its URL. */
async function serveHttp(dir: string, state: string, args: string[] = []): Promise<string> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--dir', dir, '--http', '127.0.0.1:0', '--state', state, ...args],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...ENV },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return waitFor(() => /listening on (\S+)/.exec(err)?.[1], 20_000, 'the server URL');
}

/** A real MCP client with a session of its own (2025-era streamable HTTP). */
async function connect(url: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const res = await client.callTool({ name, arguments: args });
  return { res, text: textOf(res), data: res.structuredContent as Record<string, unknown> | undefined };
}

/** The run ids a session's hatchery_runs lists. */
async function listed(client: Client): Promise<string[]> {
  const r = await call(client, 'hatchery_runs', { limit: 500 });
  expect(r.res.isError).toBeFalsy();
  return ((r.data?.runs ?? []) as { run_id: string }[]).map((x) => x.run_id);
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/** Two runs of client A waiting for an answer: one from a direct call, one from hatchery_start. */
async function twoWaitingRuns(a: Client): Promise<string[]> {
  const direct = await call(a, 'pick', { input: 'the shed' });
  expect(direct.text).toContain('Which colour for the shed?');
  const directId = UUID.exec(direct.text)?.[0];
  expect(directId).toBeDefined();
  const started = await call(a, 'hatchery_start', { name: 'pick', input: 'the gate' });
  const startedId = String(started.data?.run_id);
  await waitFor(
    async () => (await call(a, 'hatchery_status', { run_id: startedId })).data?.state === 'input_required',
    15_000,
    'the started run to wait for its answer',
  );
  return [directId!, startedId];
}

describe('hatchery_runs lists a session only its own runs', () => {
  it("client B of the same HTTP server does not see client A's waiting runs; A does", async () => {
    const dir = tempDir('hatchery-access-');
    writeHatchery(dir, 'pick.json', pick);
    const url = await serveHttp(dir, tempDir('hatchery-access-state-'));
    const a = await connect(url, 'client-a');
    const b = await connect(url, 'client-b');
    const ids = await twoWaitingRuns(a);

    expect(await listed(a)).toEqual(expect.arrayContaining(ids));
    const seenByB = await listed(b);
    for (const id of ids) expect(seenByB).not.toContain(id);
    // Filters do not widen it either.
    const waiting = await call(b, 'hatchery_runs', { status: 'input_required', hatchery: 'pick' });
    expect(waiting.data?.runs).toEqual([]);
    // A client that reconnects is a new session: it no longer lists them (the ids still work).
    const again = await connect(url, 'client-a-again');
    expect(await listed(again)).toEqual([]);
    const status = await call(again, 'hatchery_status', { run_id: ids[0] });
    expect(status.data).toMatchObject({ run_id: ids[0], state: 'input_required' });
  }, 60_000);

  it('with --list-all-runs every session sees every run', async () => {
    const dir = tempDir('hatchery-access-');
    writeHatchery(dir, 'pick.json', pick);
    const url = await serveHttp(dir, tempDir('hatchery-access-state-'), ['--list-all-runs']);
    const a = await connect(url, 'client-a');
    const b = await connect(url, 'client-b');
    const ids = await twoWaitingRuns(a);
    expect(await listed(b)).toEqual(expect.arrayContaining(ids));
  }, 60_000);
});

describe('a server knows only runs of the files it serves', () => {
  it('a CLI run of a file beside the served folder is an unknown run to every run tool, and its script never runs', async () => {
    const root = tempDir('hatchery-foreign-');
    const served = path.join(root, 'X');
    const state = path.join(root, 'state');
    const marker = path.join(root, 'marker');
    // The foreign file has the name of a served one: only its file tells them apart.
    writeHatchery(served, 'foreign.json', echoDef('foreign', '!'));
    const foreign = path.join(root, 'foreign.json');
    writeFileSync(
      foreign,
      JSON.stringify({
        name: 'foreign',
        desc: 'asks, then writes a marker',
        nodes: [
          { name: 'Pick', type: 'ask', question: 'Which colour?', choices: ['red', 'blue'], next: 'Mark' },
          { name: 'Mark', type: 'script', cmd: ['sh', '-c', `echo ran > '${marker}'; echo marked`] },
        ],
      }),
    );
    const run = await runCli(['run', foreign, '--input', 'x'], { env: { HATCHERY_STATE: state } });
    const id = UUID.exec(run.stderr)?.[0];
    expect(id, run.stderr).toBeDefined();
    const journal = path.join(state, `${id}.jsonl`);
    const before = readFileSync(journal, 'utf8');
    expect(before).toContain('"input_required"');

    // Even the server-wide view, which lists every run of the served files, does not list it.
    const cli = await spawnCli(served, { env: ENV, args: ['--state', state, '--list-all-runs'] });
    try {
      const c = cli.client;
      const runs = await call(c, 'hatchery_runs', { limit: 500 });
      expect(JSON.stringify(runs.data)).not.toContain(id);
      const invented = '00000000-0000-4000-8000-000000000000';
      const attempts: [string, Record<string, unknown>][] = [
        ['hatchery_status', {}],
        ['hatchery_result', { wait_seconds: 0 }],
        ['hatchery_resume', { force: true }],
        ['hatchery_respond', { answer: 'blue' }],
        ['hatchery_cancel', {}],
      ];
      for (const [tool, extra] of attempts) {
        const r = await call(c, tool, { run_id: id, ...extra });
        expect(r.res.isError, tool).toBe(true);
        expect(r.text, tool).toContain('unknown run id');
        // Word for word the answer for an id that never existed: its existence is not confirmed.
        const unknown = await call(c, tool, { run_id: invented, ...extra });
        expect(r.text.replaceAll(id!, invented), tool).toBe(unknown.text);
      }
      // The served file of the same name still runs: the server itself is fine.
      expect((await call(c, 'foreign', { input: 'hi' })).text).toBe('!hi');
    } finally {
      await cli.close();
    }
    expect(existsSync(marker)).toBe(false);
    // Not answered, resumed nor cancelled: the CLI run is exactly as the CLI left it.
    expect(readFileSync(journal, 'utf8')).toBe(before);
  }, 60_000);

  it('a killed CLI run of an unserved file is neither claimed nor resumed at start-up', async () => {
    const root = tempDir('hatchery-foreign-');
    const served = path.join(root, 'X');
    const state = path.join(root, 'state');
    const marker = path.join(root, 'marker');
    const slow = (name: string) => ({
      name,
      desc: 'waits, then (foreign only) writes a marker',
      nodes: [
        { name: 'Slow', type: 'script', cmd: ['sleep', '20'], next: 'Mark' },
        { name: 'Mark', type: 'script', cmd: ['sh', '-c', `echo ${name} >> '${marker}.${name}'`] },
      ],
    });
    const mine = writeHatchery(served, 'mine.json', slow('mine'));
    const foreign = path.join(root, 'foreign.json');
    writeFileSync(foreign, JSON.stringify(slow('foreign')));
    const env = { ...ENV, HATCHERY_STATE: state };
    const runs = [
      startCli(['run', mine, '--input', 'x'], { env }),
      startCli(['run', foreign, '--input', 'x'], { env }),
    ];
    for (const r of runs) r.child.stdin.end();
    const journals = await waitFor(
      () => {
        if (!existsSync(state)) return undefined;
        const found = readdirSync(state, { withFileTypes: true }).filter((f) => f.name.endsWith('.jsonl'));
        const texts = found.map((f) => readFileSync(path.join(state, f.name), 'utf8'));
        return texts.filter((t) => t.includes('"node_start","node":"Slow"')).length === 2 ? found : undefined;
      },
      15_000,
      'both CLI runs at their Slow node',
    );
    for (const r of runs) r.child.kill('SIGKILL');
    await Promise.all(runs.map((r) => r.exit));
    const files = journals.map((f) => path.join(state, f.name));
    const foreignJournal = files.find((f) => readFileSync(f, 'utf8').includes('"hatchery":"foreign"'))!;
    const mineJournal = files.find((f) => f !== foreignJournal)!;
    const before = readFileSync(foreignJournal, 'utf8');
    const foreignId = path.basename(foreignJournal, '.jsonl');

    const cli = await spawnCli(served, {
      env: ENV,
      args: ['--state', state, '--resume-interrupted', '--list-all-runs'],
    });
    try {
      // A call waits for the start-up's recovery of runs.
      const listed = await call(cli.client, 'hatchery_runs', { limit: 500 });
      expect(JSON.stringify(listed.data)).not.toContain(foreignId);
      // The served file's run was claimed: the recovery did run.
      expect(readFileSync(mineJournal, 'utf8')).toContain('"type":"interrupted"');
      expect(cli.stderr()).not.toContain(foreignId);
    } finally {
      await cli.close();
    }
    expect(readFileSync(foreignJournal, 'utf8')).toBe(before);
    expect(existsSync(`${marker}.foreign`)).toBe(false);
  }, 60_000);

  it("a task of another server's folder, on the same state folder, is unknown to tasks/* and to a forged requestState", async () => {
    const root = tempDir('hatchery-foreign-');
    const state = path.join(root, 'state');
    const marker = path.join(root, 'marker');
    const foreign = {
      name: 'foreign',
      desc: 'asks, then writes a marker',
      nodes: [
        { name: 'Pick', type: 'ask', question: 'Which colour?', choices: ['red', 'blue'], next: 'Mark' },
        { name: 'Mark', type: 'script', cmd: ['sh', '-c', `echo ran > '${marker}'; echo marked`] },
      ],
    };
    writeHatchery(path.join(root, 'Y'), 'foreign.json', foreign);
    // X serves a file of the same name: only the file tells the runs apart.
    writeHatchery(path.join(root, 'X'), 'foreign.json', echoDef('foreign', '!'));
    // Declares forms: the question is then its task's form (a client without forms gets no task).
    const y = new TasksClient({
      url: await serveHttp(path.join(root, 'Y'), state),
      capabilities: { elicitation: {} },
    });
    const xUrl = await serveHttp(path.join(root, 'X'), state, ['--list-all-runs']);
    const x = new TasksClient({ url: xUrl });

    const created = await y.callTool('foreign', { input: 'go' });
    expect(created).toMatchObject({ resultType: 'task', status: 'input_required' });
    const id = created.taskId as string;
    const journal = path.join(state, `${id}.jsonl`);
    const before = readFileSync(journal, 'utf8');
    // Stateless requests have no session: the run is listed to nobody, its starter included.
    const own = await y.callTool('hatchery_runs', {});
    expect((own.structuredContent as { runs: unknown[] }).runs).toEqual([]);

    const invented = '00000000-0000-4000-8000-000000000000';
    const answer = { 'ask-1': { action: 'accept', content: { answer: 'red' } } };
    const tries: [string, (taskId: string) => Record<string, unknown>][] = [
      ['tasks/get', (taskId) => ({ taskId })],
      ['tasks/update', (taskId) => ({ taskId, inputResponses: answer })],
      ['tasks/cancel', (taskId) => ({ taskId })],
    ];
    for (const [method, params] of tries) {
      const r = await x.request(method, params(id));
      expect(r.error, method).toBeDefined();
      const unknown = await x.request(method, params(invented));
      expect(r.error?.message.replaceAll(id, invented), method).toBe(unknown.error?.message);
    }
    // A 2026 retry naming the run in its requestState, to X's tool of the same name.
    const forms = new TasksClient({ url: xUrl, declare: false, capabilities: { elicitation: { form: {} } } });
    const retry = (requestState: string) =>
      forms.request('tools/call', {
        name: 'foreign',
        arguments: { input: 'go' },
        requestState,
        inputResponses: { answer: { action: 'accept', content: { answer: 'red' } } },
      });
    const forged = await retry(id);
    expect(forged.result?.isError).toBe(true);
    expect(textOf(forged.result)).toContain('unknown run id');
    expect(textOf(forged.result).replaceAll(id, invented)).toBe(textOf((await retry(invented)).result));
    const listed = await x.callTool('hatchery_runs', { limit: 500 });
    expect(JSON.stringify(listed)).not.toContain(id);

    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(journal, 'utf8')).toBe(before);
    // Its own server still answers it, and then the script runs: the marker is a real witness.
    await y.updateTask(id, answer);
    expect((await y.poll(id)).status).toBe('completed');
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
  }, 60_000);
});
