/**
 * The journal as a user gets it from the built CLI, against the fake OpenAI server: where it is kept
 * (--state, HATCHERY_STATE, the default), --no-journal, what it holds, and runs that outlive their
 * process: a run killed with SIGKILL is claimed as interrupted, a live one is not, and a cancel from
 * another process stops a live run.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { JOURNAL_VERSION, type JournalRecord } from '../../src/journal/store.js';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, startCli, tempDir } from '../helpers.js';

const { openai } = fakeVendors();
const KEY = 'sk-cli-journal-secret-0123456789';
const ENV_SECRET = 'correct-horse-battery-staple-42';

let dir: string;
const env = (extra: Record<string, string> = {}) => ({
  OPENAI_API_KEY: KEY,
  OPENAI_BASE_URL: `${openai.url}/v1`,
  DB_PASSWORD: ENV_SECRET,
  ...extra,
});

const chain = {
  name: 'chain',
  desc: 'two drones',
  model: 'openai:gpt-test',
  nodes: [
    { name: 'First', usr_prompt: 'one {{ ctx.input }}', next: 'Second' },
    { name: 'Second', usr_prompt: 'two {{ out.First }}' },
  ],
};

function write(def: unknown, name = 'chain.json'): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(def));
  return file;
}

const journals = (state: string) =>
  existsSync(state) ? readdirSync(state).filter((n) => n.endsWith('.jsonl')) : [];
const recordsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as JournalRecord);

async function until<T>(what: string, probe: () => T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeEach(() => {
  dir = tempDir('hatchery-journal-cli-');
  openai.reset();
});

describe('hatchery-mcp run keeps a journal', () => {
  it('writes versioned records in order that match the run, and no secret', async () => {
    const state = path.join(dir, 'state');
    openai.enqueue(`first knows ${KEY}`, `second knows ${ENV_SECRET}`);
    const file = write(chain);
    const res = await runCli(['run', file, '--input', 'go', '--state', state, '--json', '-q'], {
      env: env(),
    });
    expect(res.code).toBe(0);
    const [name] = journals(state);
    expect(journals(state)).toHaveLength(1);
    const text = readFileSync(path.join(state, name!), 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(ENV_SECRET);
    const recs = recordsOf(path.join(state, name!));
    expect(recs.map((r) => `${r.type}${r.node ? `:${r.node}` : ''}`)).toEqual([
      'run_start',
      'node_start:First',
      'model_call:First',
      'node_end:First',
      'node_start:Second',
      'model_call:Second',
      'node_end:Second',
      'run_end',
    ]);
    expect(recs.every((r) => r.v === JOURNAL_VERSION)).toBe(true);
    const ats = recs.map((r) => r.at);
    expect([...ats].sort((a, b) => a - b)).toEqual(ats);
    expect(recs[0]).toMatchObject({ hatchery: 'chain', file, input: 'go', source: 'cli' });
    expect(name).toBe(`${recs[0]!.id}.jsonl`);
    const out = JSON.parse(res.stdout);
    // What the CLI prints goes through its output step too (issue 36): redacted like the journal.
    expect(out.output).toBe('second knows [redacted]');
    expect(recs.at(-1)).toMatchObject({
      status: 'succeeded',
      output: 'second knows [redacted]',
      steps: 2,
      usage: out.usage,
    });
    expect(recs[2]).toMatchObject({ vendor: 'openai', model: 'gpt-test', text: 'first knows [redacted]' });
    expect(recs[5]).toMatchObject({ text: 'second knows [redacted]' });
  });

  it('writes nothing with --no-journal', async () => {
    const file = write(chain);
    const res = await runCli(['run', file, '--input', 'go', '--no-journal', '-q'], {
      env: env({ HATCHERY_STATE: '' }),
      cwd: dir,
    });
    expect(res.code).toBe(0);
    expect(existsSync(path.join(dir, '.hatchery'))).toBe(false);
    const both = await runCli(['run', file, '--no-journal', '--state', dir], { env: env() });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--state and --no-journal exclude each other');
  });

  it('keeps journals in .hatchery/runs of the working folder by default, or in HATCHERY_STATE', async () => {
    const file = write(chain);
    expect(
      (await runCli(['run', file, '--input', 'a', '-q'], { env: env({ HATCHERY_STATE: '' }), cwd: dir }))
        .code,
    ).toBe(0);
    expect(journals(path.join(dir, '.hatchery', 'runs'))).toHaveLength(1);
    const viaEnv = path.join(dir, 'from-env');
    expect(
      (await runCli(['run', file, '--input', 'b', '-q'], { env: env({ HATCHERY_STATE: viaEnv }), cwd: dir }))
        .code,
    ).toBe(0);
    expect(journals(viaEnv)).toHaveLength(1);
    // --state wins over the environment.
    const viaFlag = path.join(dir, 'from-flag');
    expect(
      (
        await runCli(['run', file, '-i', 'c', '-q', '--state', viaFlag], {
          env: env({ HATCHERY_STATE: viaEnv }),
        })
      ).code,
    ).toBe(0);
    expect(journals(viaFlag)).toHaveLength(1);
    expect(journals(viaEnv)).toHaveLength(1);
  });

  it('fails before any model call when the state folder cannot be made, naming the way out', async () => {
    const file = write(chain);
    const blocked = path.join(file, 'runs');
    const res = await runCli(['run', file, '--input', 'go', '--state', blocked, '-q'], { env: env() });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot create the run state folder ${blocked}`);
    expect(res.stderr).toContain('--no-journal');
    expect(openai.requests).toHaveLength(0);
  });

  it('documents the flags in run --help and serve --help', async () => {
    expect((await runCli(['run', '--help'])).stdout).toMatch(/--state DIR[\s\S]*--no-journal/);
    expect((await runCli(['serve', '--help'])).stdout).toMatch(
      /--state DIR[\s\S]*beside the served folder[\s\S]*--no-journal/,
    );
  });
});

describe('runs that outlive their process', () => {
  it('claims a run killed with SIGKILL as interrupted, once; a live run is not claimed and can be cancelled', async () => {
    const state = path.join(dir, 'state');
    const file = write(chain);
    // First answers at once; Second's model call hangs until the process is killed.
    openai.enqueue('first done', { text: 'never', delayMs: 60_000 });
    const killed = startCli(['run', file, '--input', 'go', '--state', state, '-q'], { env: env() });
    const jfile = await until('the first node in the journal', () => {
      const [n] = journals(state);
      return n && readFileSync(path.join(state, n), 'utf8').includes('"model_call"')
        ? path.join(state, n)
        : undefined;
    });
    await until('the second model call', () => openai.requests.length === 2);
    const id = path.basename(jfile, '.jsonl');

    // While it runs, nobody may claim it.
    const store = new FileRunStore(state, { env: {} });
    expect(await store.claimInterrupted()).toEqual([]);
    expect((await store.read(id))?.summary.status).toBe('running');

    killed.child.kill('SIGKILL');
    await killed.exit;
    const [first, second] = await Promise.all([
      store.claimInterrupted(),
      new FileRunStore(state, { env: {} }).claimInterrupted(),
    ]);
    const claims = [...first, ...second];
    expect(claims.map((s) => s.id)).toEqual([id]);
    expect(claims[0]).toMatchObject({ status: 'interrupted', node: 'Second', steps: 1 });
    expect(await store.claimInterrupted()).toEqual([]);
    const run = await store.read(id);
    expect(run?.summary.status).toBe('interrupted');
    expect(run?.records.filter((r) => r.type === 'interrupted')).toHaveLength(1);

    // A live run in another process: `cancel` asks its owner, which stops it.
    openai.enqueue('first again', { text: 'never', delayMs: 60_000 });
    const live = startCli(['run', file, '--input', 'go', '--state', state, '-q'], { env: env() });
    const liveId = await until('the second run', () =>
      journals(state)
        .map((n) => n.slice(0, -6))
        .find((n) => n !== id),
    );
    await until('its second model call', () => openai.requests.length === 4);
    expect(await store.claimInterrupted()).toEqual([]);
    const asked = await store.cancel(liveId);
    expect(asked?.status).toBe('running');
    expect(await live.exit).toBe(130);
    expect(live.err()).toContain('cancelled');
    const ended = await store.read(liveId);
    expect(ended?.summary).toMatchObject({ status: 'cancelled', code: 'ABORTED', node: 'Second' });
    await store.close();
  });
});
