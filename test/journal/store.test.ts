/**
 * The run journal in process: a Runtime with a FileRunStore writes one versioned JSON-lines file per
 * run, in event order, redacted, large strings stored once, and reads it back into a summary.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { FileRunStore } from '../../src/journal/file-store.js';
import { JOURNAL_VERSION, type JournalRecord } from '../../src/journal/store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

const KEY = 'sk-journal-key-0123456789abcdef';
const ENV_SECRET = 'hunter2-database-password-xyz';

function setup(
  reply: ConstructorParameters<typeof ScriptedProvider>[0] = () => 'ok',
  env: Record<string, string> = {},
) {
  const dir = tempDir('hatchery-journal-');
  const state = path.join(dir, '.hatchery', 'runs');
  const store = new FileRunStore(state, { env: {} });
  const model = new ScriptedProvider(reply);
  const runtime = new Runtime({ providers: { openai: model }, env, store, cwd: dir });
  return { dir, state, store, model, runtime };
}

const records = (file: string): JournalRecord[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as JournalRecord);

describe('a journaled run', () => {
  it('writes its records in order, versioned, and they add up to the run', async () => {
    const { dir, state, store, runtime } = setup(
      (req: ChatRequest) => `seen ${String(req.messages.at(-1)?.content)}`,
    );
    const h = load(
      hatch(
        [
          { name: 'A', model: 'openai:gpt-test', usr_prompt: 'hello {{ ctx.input }}', next: 'B' },
          echo('B', 'b got {{ out.A }}'),
        ],
        { name: 'pair' },
      ),
      dir,
    );
    const res = await runtime.run(h, { input: 'Ada', source: 'cli' });
    await store.close();
    const recs = records(path.join(state, `${res.runId}.jsonl`));
    expect(recs.map((r) => r.type)).toEqual([
      'run_start',
      'node_start',
      'model_call',
      'node_end',
      'node_start',
      'tool_call',
      'node_end',
      'run_end',
    ]);
    for (const r of recs) {
      expect(r.v).toBe(JOURNAL_VERSION);
      expect(typeof r.at).toBe('number');
    }
    expect(recs[0]).toMatchObject({
      id: res.runId,
      hatchery: 'pair',
      file: h.file,
      input: 'Ada',
      source: 'cli',
      owner: { pid: process.pid },
    });
    expect(recs[0]!.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(Object.keys(recs[0]!.nodes as object)).toEqual(['A', 'B']);
    expect(recs[2]).toMatchObject({
      node: 'A',
      vendor: 'openai',
      model: 'gpt-test',
      text: 'seen hello Ada',
      usage: { inputTokens: 1, outputTokens: 1 },
    });
    expect(recs[2]!.key).toMatch(/^[0-9a-f]{16}$/);
    expect(recs[2]).not.toHaveProperty('request');
    expect(recs[3]).toMatchObject({ node: 'A', output: 'seen hello Ada', path: '', seq: 1, next: 'B' });
    expect(recs[5]).toMatchObject({
      node: 'B',
      tool: 'echo',
      args: { text: 'b got seen hello Ada' },
      result: 'b got seen hello Ada',
      isError: false,
    });
    expect(recs[7]).toMatchObject({ status: 'succeeded', output: res.output, steps: 2 });

    const run = await store.read(res.runId);
    expect(run?.summary).toMatchObject({
      id: res.runId,
      status: 'succeeded',
      steps: 2,
      output: res.output,
      attempts: 1,
      node: 'B',
      usage: { inputTokens: 1, outputTokens: 1 },
    });
    expect((await store.list()).map((s) => s.id)).toEqual([res.runId]);
  });

  it('records a failed run with its code and node', async () => {
    const { dir, store, runtime } = setup([new HatcheryError('PROVIDER', 'the model is down')]);
    const h = load(hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: 'x' }]), dir);
    const err = await runtime.run(h).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HatcheryError);
    const [s] = await store.list();
    expect(s).toMatchObject({ status: 'failed', code: 'PROVIDER', node: 'A' });
    expect(s!.error).toContain('the model is down');
    await store.close();
  });

  it('ends as input_required with the question, or cancelled when its signal or a store cancel stops it', async () => {
    const question = { node: 'A', kind: 'ask', question: 'Which colour?', choices: ['red', 'blue'] };
    const suspend = new HatcheryError('INPUT_REQUIRED' as HatcheryError['code'], 'the run needs an answer', {
      node: 'A',
      question,
    });
    const { dir, store, runtime } = setup([suspend]);
    const h = load(hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: 'x' }]), dir);
    await expect(runtime.run(h)).rejects.toThrow('the run needs an answer');
    const [asked] = await store.list();
    expect(asked).toMatchObject({ status: 'input_required', node: 'A', question, code: 'INPUT_REQUIRED' });

    const slow = load(
      hatch(
        [
          {
            name: 'S',
            type: 'script',
            cmd: [process.execPath, '-e', 'setTimeout(() => {}, 20000)'],
          },
        ],
        { name: 'slow' },
      ),
      dir,
      'slow.json',
    );
    const ctrl = new AbortController();
    const byUser = runtime.run(slow, { signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 200);
    await expect(byUser).rejects.toMatchObject({ code: 'ABORTED' });
    const byStore = runtime.run(slow, { source: 'mcp' });
    const id = await (async () => {
      for (;;) {
        const running = await store.list({ status: 'running' });
        if (running[0]) return running[0].id;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    expect((await store.cancel(id))?.status).toBe('running');
    await expect(byStore).rejects.toMatchObject({ code: 'ABORTED' });
    const cancelled = await store.list({ status: 'cancelled' });
    expect(cancelled.map((s) => s.source).sort()).toEqual(['api', 'mcp']);
    expect((await store.read(id))?.summary).toMatchObject({ status: 'cancelled', node: 'S' });
    await store.close();
  });

  it('never writes a secret: the API key and an env secret echoed by the model', async () => {
    const env = { OPENAI_API_KEY: KEY, DB_PASSWORD: ENV_SECRET };
    const { dir, state, store, runtime } = setup(() => `key ${KEY} and ${ENV_SECRET}`, env);
    const h = load(hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: 'tell {{ ctx.input }}' }]), dir);
    const res = await runtime.run(h, { input: `secret ${ENV_SECRET}` });
    expect(res.output).toContain(ENV_SECRET);
    await store.close();
    const text = readFileSync(path.join(state, `${res.runId}.jsonl`), 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(ENV_SECRET);
    expect(text).toContain('[redacted]');
  });

  it('stores a 100 KB output once; reading resolves the references', async () => {
    const big = 'x'.repeat(100 * 1024);
    const { dir, state, store, runtime } = setup(() => big);
    const h = load(
      hatch([
        { name: 'A', model: 'openai:gpt-test', usr_prompt: 'big', save_output: 'big', next: 'B' },
        echo('B', '{{ ctx.big }}'),
      ]),
      dir,
    );
    const res = await runtime.run(h);
    expect(res.output).toBe(big);
    await store.close();
    const text = readFileSync(path.join(state, `${res.runId}.jsonl`), 'utf8');
    expect(text.split(big).length - 1).toBe(1);
    expect(text.length).toBeLessThan(big.length + 10_000);
    expect(text).toContain('"$same"');
    const run = await store.read(res.runId);
    expect(run?.summary.output).toBe(big);
    const b = run!.records.find((r) => r.type === 'tool_call');
    expect(b).toMatchObject({ result: big, args: { text: big } });
  });

  it('records a nested hatch: run as nested records', async () => {
    const { dir, store, runtime } = setup();
    load(hatch([echo('Inner', 'inner {{ ctx.input }}')], { name: 'inner' }), dir, 'inner.json');
    const h = load(
      hatch([{ name: 'Call', type: 'tool', tool_name: 'hatch:inner.json', tool_args: { input: 'Ada' } }], {
        name: 'outer',
      }),
      dir,
    );
    const res = await runtime.run(h);
    const run = await store.read(res.runId);
    const types = run!.records.map((r) => r.type);
    expect(types).toEqual([
      'run_start',
      'node_start',
      'nested_start',
      'node_start',
      'tool_call',
      'node_end',
      'nested_end',
      'tool_call',
      'node_end',
      'run_end',
    ]);
    expect(run!.records[2]).toMatchObject({ hatchery: 'inner', depth: 1, input: 'Ada' });
    expect(run!.records[3]).toMatchObject({ node: 'Inner', depth: 1, hatchery: 'inner' });
    expect(run!.records[6]).toMatchObject({ hatchery: 'inner', depth: 1, ok: true, output: 'inner Ada' });
    expect(run!.summary).toMatchObject({ status: 'succeeded', node: 'Call', steps: 2 });
    await store.close();
  });

  it('writes nothing, and builds no journal, without a store', async () => {
    const dir = tempDir('hatchery-journal-');
    const runtime = new Runtime({ env: {}, cwd: dir });
    const h = load(hatch([echo('A', 'a')]), dir);
    expect((await runtime.run(h)).output).toBe('a');
  });
});

describe('reading journals', () => {
  it('refuses hostile run ids without touching the file system', async () => {
    const { store } = setup();
    for (const id of [
      '../../etc/passwd',
      '/etc/passwd',
      '..',
      '',
      'a'.repeat(36),
      '00000000-0000-0000-0000-000000000000/../x',
    ]) {
      expect(await store.read(id)).toBeUndefined();
      expect(await store.cancel(id)).toBeUndefined();
      const err = await store.reopen(id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HatcheryError);
      expect((err as HatcheryError).code).toBe('NOT_FOUND');
    }
    expect(() =>
      store.create({
        id: '../x',
        hatchery: 'h',
        file: '',
        hash: '',
        nodes: {},
        source: 'api',
        startedAt: 0,
        owner: { pid: 1, host: 'h', since: 0 },
      }),
    ).toThrow(/not a UUID/);
  });

  it('skips a corrupt line anywhere and a truncated last line, and says so', async () => {
    const { dir, state, store, runtime } = setup();
    const h = load(hatch([echo('A', 'a', { next: 'B' }), echo('B', 'b')]), dir);
    const res = await runtime.run(h);
    await store.close();
    const file = path.join(state, `${res.runId}.jsonl`);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    lines.splice(2, 0, '{"v":1,"at":1,"type":"node_end",garbage');
    writeFileSync(file, `${lines.join('\n')}\n{"v":1,"at":2,"ty`);
    const run = await store.read(res.runId);
    expect(run?.summary).toMatchObject({ status: 'succeeded', steps: 2, corruptLines: 2, output: 'b' });
    expect((await store.list())[0]?.id).toBe(res.runId);
    // Complete garbage, and an empty file, are not runs (and do not throw).
    writeFileSync(file, '\u0000\u0001not json at all');
    expect(await store.read(res.runId)).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });
});

describe('the state folder', () => {
  it('cannot be written by a run: write_output and write_file are refused', async () => {
    const { dir, state, store } = setup();
    const model = new ScriptedProvider([
      { toolCalls: [{ name: 'write_file', args: { path: '.hatchery/runs/forged.jsonl', content: '{}' } }] },
      (req: ChatRequest) => String(req.messages.at(-1)?.content),
    ]);
    const runtime = new Runtime({
      providers: { openai: model },
      env: {},
      store,
      cwd: dir,
      allowWrite: [state],
    });
    const h = load(
      hatch([{ name: 'W', model: 'openai:gpt-test', usr_prompt: 'write', tools: ['write_file'] }]),
      dir,
    );
    const res = await runtime.run(h);
    expect(res.output).toContain('inside the run state folder');
    const out = load(
      hatch([echo('A', 'forged', { write_output: '.hatchery/runs/x.jsonl' })], { name: 'out' }),
      dir,
      'out.json',
    );
    const err = await runtime.run(out).catch((e: unknown) => e);
    expect((err as HatcheryError).code).toBe('PATH_DENIED');
    expect((err as HatcheryError).message).toContain(`inside the run state folder ${state}`);
    await store.close();
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(state).every((n) => /^[0-9a-f-]{36}\.jsonl$/.test(n))).toBe(true);
  });
});
