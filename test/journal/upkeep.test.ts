/**
 * Keeping the state folder in order: pruning by count and age (never a running run), claims by
 * several processes at once (each run claimed once), reopening a run for another attempt, and the
 * journal's model-call keys being the cassette's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { JOURNAL_VERSION } from '../../src/journal/store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Cassette } from '../../src/runtime/cassette/cassette.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, REPO_ROOT, tempDir } from '../helpers.js';
import { runStartRecord } from './run-record.js';

/** Writes a journal by hand: its run_start, and a run_end unless it is still running. */
function journal(
  state: string,
  id: string,
  owner: { pid: number; host: string; since: number },
  ended: boolean,
): string {
  const file = path.join(state, `${id}.jsonl`);
  const start = runStartRecord(id, owner);
  const end = { v: JOURNAL_VERSION, at: Date.now(), type: 'run_end', status: 'succeeded', output: 'x' };
  writeFileSync(file, `${JSON.stringify(start)}\n${ended ? `${JSON.stringify(end)}\n` : ''}`);
  return file;
}

const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** A pid that no process has now: a child that already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

describe('prune', () => {
  it('keeps the newest maxRuns finished runs and drops those older than maxAgeDays, never a running one', async () => {
    const state = tempDir('hatchery-prune-');
    const owner = { pid: deadPid(), host: hostname(), since: 1 };
    const now = Date.now() / 1000;
    for (let i = 0; i < 6; i++) {
      const f = journal(state, uuid(i), owner, i !== 0);
      // uuid(0) is the oldest, and still running.
      utimesSync(f, now - 100 + i, now - 100 + i);
    }
    const store = new FileRunStore(state, { maxRuns: 3, env: {} });
    expect(await store.prune()).toBe(2);
    const left = (await store.list()).map((s) => s.id).sort();
    expect(left).toEqual([uuid(0), uuid(3), uuid(4), uuid(5)]);

    const old = journal(state, uuid(9), owner, true);
    utimesSync(old, now - 40 * 86_400, now - 40 * 86_400);
    const byAge = new FileRunStore(state, { maxRuns: 100, maxAgeDays: 30, env: {} });
    expect(await byAge.prune()).toBe(1);
    expect(await byAge.read(uuid(9))).toBeUndefined();
    expect(await byAge.read(uuid(0))).toBeDefined();
  });
});

describe('claimInterrupted', () => {
  it('reads only the last line of ended runs, and still claims a run resumed after its end or cut mid-line', async () => {
    const state = tempDir('hatchery-claim-tail-');
    const dead = { pid: deadPid(), host: hostname(), since: 1 };
    const rec = (type: string, extra: Record<string, unknown> = {}) =>
      `${JSON.stringify({ v: JOURNAL_VERSION, at: Date.now(), type, ...extra })}\n`;
    // Ended: skipped by their last line, or (a run_end longer than the tail read) by the full read.
    journal(state, uuid(1), dead, true);
    const long = journal(state, uuid(2), dead, false);
    writeFileSync(
      long,
      readFileSync(long, 'utf8') + rec('run_end', { status: 'failed', error: 'e'.repeat(40_000) }),
    );
    // Resumed after its end by a process that died since: running, so claimed.
    const resumed = journal(state, uuid(3), dead, true);
    writeFileSync(resumed, readFileSync(resumed, 'utf8') + rec('resumed', { owner: dead }));
    // A crash cut its last line after a resume: the tail is not a whole record, so the file is read.
    const cut = journal(state, uuid(4), dead, true);
    writeFileSync(cut, `${readFileSync(cut, 'utf8')}${rec('resumed', { owner: dead })}{"v":1,"at":1,"ty`);
    // Never ended.
    journal(state, uuid(5), dead, false);
    const claimed = await new FileRunStore(state, { env: {} }).claimInterrupted();
    expect(claimed.map((s) => s.id).sort()).toEqual([uuid(3), uuid(4), uuid(5)]);
    const again = new FileRunStore(state, { env: {} });
    expect((await again.read(uuid(2)))?.summary.status).toBe('failed');
    expect(await again.claimInterrupted()).toEqual([]);
  });

  it('gives each interrupted run to exactly one of several processes claiming at once', async () => {
    const state = tempDir('hatchery-claim-');
    const dead = { pid: deadPid(), host: hostname(), since: 1 };
    const ids = Array.from({ length: 12 }, (_, i) => uuid(i));
    for (const id of ids) journal(state, id, dead, false);
    // One finished run and one owned by this live process are never claimed.
    journal(state, uuid(100), dead, true);
    journal(state, uuid(101), { pid: process.pid, host: hostname(), since: Date.now() + 1 }, false);
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    journal(state, uuid(102), { pid: live.pid!, host: hostname(), since: 1 }, false);
    const store = new URL('../../dist/journal/file-store.js', import.meta.url).href;
    const script = `import(${JSON.stringify(store)}).then(async ({ FileRunStore }) => {
      const claimed = await new FileRunStore(${JSON.stringify(state)}, { env: {} }).claimInterrupted();
      process.stdout.write(JSON.stringify(claimed.map((s) => s.id)));
    });`;
    const outputs = await Promise.all(
      Array.from({ length: 4 }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT });
        let out = '';
        child.stdout.on('data', (b) => {
          out += b;
        });
        return new Promise<string[]>((resolve) => child.on('close', () => resolve(JSON.parse(out || '[]'))));
      }),
    );
    const all = outputs.flat().sort();
    // uuid(101) and uuid(102) belong to live processes (this one, and a sleeping child).
    expect(all).toEqual(ids);
    const store2 = new FileRunStore(state, { env: {} });
    for (const id of ids) {
      const run = await store2.read(id);
      expect(run?.summary.status).toBe('interrupted');
      expect(run?.records.filter((r) => r.type === 'interrupted')).toHaveLength(1);
    }
    expect((await store2.read(uuid(102)))?.summary.status).toBe('running');
    expect((await store2.read(uuid(100)))?.summary.status).toBe('succeeded');
    // For this process, uuid(101) names its pid with another start time: a reused pid, the owner is gone.
    expect((await store2.claimInterrupted()).map((s) => s.id)).toEqual([uuid(101)]);
    live.kill();
  });
});

describe('reopen', () => {
  it('appends an attempt after a line cut short, and the run counts it', async () => {
    const state = tempDir('hatchery-reopen-');
    const id = uuid(7);
    const file = journal(state, id, { pid: deadPid(), host: hostname(), since: 1 }, false);
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"v":1,"at":1,"type":"node_st`);
    const store = new FileRunStore(state, { env: {} });
    expect(await store.claimInterrupted()).toHaveLength(1);
    const j = await store.reopen(id, { from: 'B' });
    j.append('note', { text: 'hello' });
    await j.end('succeeded', { output: 'done' });
    const run = await store.read(id);
    expect(run?.records.map((r) => r.type)).toEqual([
      'run_start',
      'interrupted',
      'resumed',
      'note',
      'run_end',
    ]);
    expect(run?.records[2]).toMatchObject({ from: 'B', owner: { pid: process.pid } });
    expect(run?.summary).toMatchObject({ status: 'succeeded', attempts: 2, output: 'done', corruptLines: 1 });
  });
});

describe('the journal is a cassette', () => {
  it('keys each model call as the cassette does', async () => {
    const dir = tempDir('hatchery-jkey-');
    const cas = path.join(dir, 'c.jsonl');
    const cassette = await Cassette.open({
      file: cas,
      mode: 'record',
      env: { OPENAI_API_KEY: 'sk-abcdefghijklmnop' },
    });
    const store = new FileRunStore(path.join(dir, 'state'), { env: {} });
    const model = new ScriptedProvider(() => 'fine');
    const runtime = new Runtime({
      providers: { openai: model },
      env: { OPENAI_API_KEY: 'sk-abcdefghijklmnop' },
      store,
      cassette,
      cwd: dir,
    });
    const h = load(
      hatch([
        {
          name: 'A',
          model: 'openai:gpt-test',
          sys_prompt: 'be brief',
          usr_prompt: 'key sk-abcdefghijklmnop {{ ctx.input }}',
          next: 'B',
        },
        { name: 'B', model: 'openai:gpt-test', usr_prompt: 'then {{ out.A }}', temperature: 0.2 },
        echo('C', 'c'),
      ]),
      dir,
    );
    const res = await runtime.run(h, { input: 'Authorization: Bearer abc.def' });
    const run = await store.read(res.runId);
    const keys = run!.records.filter((r) => r.type === 'model_call').map((r) => r.key);
    const recorded = readFileSync(cas, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l).key);
    expect(keys).toHaveLength(2);
    expect(keys).toEqual(recorded);
    await runtime.close();
  });
});
