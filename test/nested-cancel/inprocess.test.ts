/**
 * Issue 9 in process: a hatch: sub-run, a node: tool and a spawned agent end with the tool call that
 * started them (timeout, a failed parallel sibling, a cancelled run), so their scripts never write
 * after the caller failed.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Hatchery } from '../../src/engine/contracts.js';
import { loadHatchery } from '../../src/loader/load.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { callTool, loadIn, type Reply, Scripted } from '../tools/helpers.js';
import {
  appears,
  type CASES,
  expectNoLateWrite,
  LATE_MS,
  lateWriter,
  marker,
  writeCases,
} from './helpers.js';

let dir: string;
const loaded = new Map<string, Hatchery>();

async function file(name: string): Promise<Hatchery> {
  let h = loaded.get(name);
  if (!h) {
    h = await loadHatchery(path.join(dir, `${name}.json`));
    loaded.set(name, h);
  }
  return h;
}

/** Runs case `name` with the marker as input; resolves with the error and when it came. */
async function fails(name: keyof typeof CASES | 'sub', input: string, signal?: AbortSignal) {
  const err = await new Runtime({ env: {} })
    .run(await file(name), { input, signal })
    .then(() => undefined)
    .catch((e: unknown) => e as Error & { code?: string });
  return { err, at: Date.now() };
}

beforeAll(() => {
  dir = tempDir('nested-cancel-dir-');
  writeCases(dir);
});

describe.concurrent('nested work ends with the tool call that started it (in process)', () => {
  it('lets the nested script write its marker when nothing stops it (the control)', async () => {
    const m = marker();
    const { err } = await fails('sub', m);
    expect(err).toBeUndefined();
    expect(existsSync(m)).toBe(true);
  });

  it('ends a hatch: sub-run when the baneling call times out', async () => {
    const m = marker();
    const { err, at } = await fails('timeout', m);
    expect(err?.code).toBe('TIMEOUT');
    expect(err?.message).toContain('tool "sub" timed out after 200 ms');
    await expectNoLateWrite(m, at);
  });

  it('ends a hatch: sub-run when a parallel sibling fails', async () => {
    const m = marker();
    const { err, at } = await fails('sibling', m);
    expect(existsSync(`${m}.started`)).toBe(true);
    expect(err?.message).toMatch(/branch "Fail" failed: .*exited with code 3/);
    await expectNoLateWrite(m, at);
  });

  it('ends a node: tool run when the baneling call times out', async () => {
    const m = marker();
    const { err, at } = await fails('nodetool', m);
    expect(err?.code).toBe('TIMEOUT');
    expect(err?.message).toContain('tool "Slow" timed out after 200 ms');
    await expectNoLateWrite(m, at);
  });

  it('ends a hatch: sub-run when the run is cancelled', async () => {
    const m = marker();
    const ctrl = new AbortController();
    const run = fails('cancel', m, ctrl.signal);
    await appears(`${m}.started`);
    ctrl.abort();
    const { err, at } = await run;
    expect(err?.code).toBe('ABORTED');
    expect(err?.message).toMatch(/cancel/);
    await expectNoLateWrite(m, at);
  });

  it('ends a spawned agent, and the tools it called, when the spawn_agent call times out', async () => {
    // The agent calls First (800 ms), then Second (500 ms): the spawn_agent call times out at 1000 ms,
    // while First runs or just after; an agent that outlived it would start Second and write its marker.
    const work = tempDir('nested-cancel-');
    const first = path.join(work, 'first');
    const second = path.join(work, 'second');
    const h = loadIn(tempDir(), {
      name: 'spawner',
      desc: 'spawns an agent that calls slow tools',
      nodes: [
        {
          name: 'Coordinator',
          usr_prompt: '{{ ctx.input }}',
          spawn: {
            templates: [{ name: 'worker', desc: 'works slowly', tools: ['node:First', 'node:Second'] }],
          },
        },
        lateWriter('First', '{{ ctx.input }}', 800),
        lateWriter('Second', '{{ ctx.input }}', 500),
      ],
    });
    let failedAt = 0;
    const model = new Scripted((req: ChatRequest): Reply => {
      const turn = req.messages.filter((m) => m.role === 'tool').length;
      if (req.system.startsWith('You are a focused helper agent')) {
        if (turn === 0) return callTool('First', { input: first });
        if (turn === 1) return callTool('Second', { input: second });
        return 'agent done';
      }
      if (turn === 0) return callTool('spawn_agent', { template: 'worker', task: 'work' });
      failedAt = Date.now();
      return `coordinator saw: ${req.messages.at(-1)!.content as string}`;
    });
    const rt = new Runtime({ env: {}, providers: { openai: model }, tools: { toolTimeoutMs: LATE_MS } });
    const res = await rt.run(h, { input: 'go' });
    expect(res.output).toContain('tool "spawn_agent" timed out after 1000 ms');
    expect(existsSync(`${first}.started`)).toBe(true);
    await expectNoLateWrite(second, failedAt);
  });
});
