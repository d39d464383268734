/**
 * A cancel from another process reaches the run's owner through a `<id>.cancel` marker in the state
 * folder, which the owner looks for every poll: a stat per run when few run, one listing of the folder
 * when many do in a folder of few files, a stat per run again when the folder holds many more files than
 * runs are in flight. Either way exactly the marked runs stop, and their markers are removed.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

async function cancelByMarker(runs: number, marked: number[], otherFiles = 0) {
  const dir = tempDir('hatchery-cancel-marker-');
  const state = path.join(dir, 'runs');
  // Files that are no run of this store (nothing reads or prunes them), only entries of the folder.
  mkdirSync(state, { recursive: true });
  for (let i = 0; i < otherFiles; i++) writeFileSync(path.join(state, `other-${i}.txt`), '');
  const store = new FileRunStore(state, { env: {}, pollMs: 30 });
  // The model never answers within the test: only a cancel ends a run.
  const model = new ScriptedProvider(() => 'late', { delayMs: 60_000 });
  const runtime = new Runtime({ providers: { openai: model }, env: {}, store, cwd: dir });
  const h = load(hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: 'x' }]), dir);
  const controllers = Array.from({ length: runs }, () => new AbortController());
  const outcomes = controllers.map((c) =>
    runtime.run(h, { signal: c.signal }).then(
      () => 'finished',
      (err: { code?: string }) => err.code,
    ),
  );
  let running: { id: string }[] = [];
  while (running.length < runs) {
    await new Promise((r) => setTimeout(r, 20));
    running = await store.list({ status: 'running' });
  }
  // A few polls, so that the store has listed the folder once and knows how many files it holds.
  if (otherFiles > 0) await new Promise((r) => setTimeout(r, 150));
  const ids = new Set(marked.map((i) => running[i]!.id));
  for (const id of ids) writeFileSync(path.join(state, `${id}.cancel`), '{}\n');
  // The marked runs end within a few polls; the others keep running.
  let byId = new Map<string, string>();
  for (let waited = 0; waited < 5000; waited += 30) {
    byId = new Map((await store.list()).map((s) => [s.id, s.status]));
    if ([...ids].every((id) => byId.get(id) === 'cancelled')) break;
    await new Promise((r) => setTimeout(r, 30));
  }
  for (const id of ids) expect(byId.get(id)).toBe('cancelled');
  for (const s of running) if (!ids.has(s.id)) expect(byId.get(s.id)).toBe('running');
  for (const id of ids) expect(existsSync(path.join(state, `${id}.cancel`))).toBe(false);
  for (const c of controllers) c.abort();
  expect((await Promise.all(outcomes)).every((o) => o === 'ABORTED')).toBe(true);
  await runtime.close();
  await store.close();
}

describe('cancel markers from another process', () => {
  it('stop the marked run when a few runs are in flight (a stat per run)', async () => {
    await cancelByMarker(2, [1]);
  });

  it('stop exactly the marked runs when many are in flight (one listing of the folder)', async () => {
    await cancelByMarker(20, [3, 11, 17]);
  });

  it('stop exactly the marked runs when many are in flight in a folder of many more files (a stat per run)', async () => {
    await cancelByMarker(20, [0, 9, 19], 400);
  });
});
