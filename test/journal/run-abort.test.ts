/**
 * A journaled run follows its caller's signal through its own controller (which a cancel through the
 * store aborts too): the caller's abort cancels the run and its journal says so, an aborted signal
 * cancels it before it starts, and a long-lived signal keeps no listener of the runs that ended.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

let runtime: Runtime | undefined;
afterEach(() => runtime?.close());

function setup(delayMs: number) {
  const store = new FileRunStore(tempDir(), { env: {} });
  const model = new ScriptedProvider(() => 'done', { delayMs });
  runtime = new Runtime({ providers: { openai: model }, env: {}, store });
  const h = load(hatch([{ name: 'Ask', model: 'openai:m', usr_prompt: '{{ ctx.input }}' }]));
  return { store, h, rt: runtime };
}

describe('a journaled run and its caller’s signal', () => {
  it('the caller’s abort cancels the run, and the journal ends it as cancelled', async () => {
    const { store, h, rt } = setup(5_000);
    const caller = new AbortController();
    const ids: string[] = [];
    const run = rt.run(h, {
      input: 'x',
      signal: caller.signal,
      onEvent: (e) => {
        if (e.type === 'node_start') ids.push(e.runId);
      },
    });
    setTimeout(() => caller.abort(), 20);
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    const stored = await store.read(ids[0]!);
    expect(stored?.summary.status).toBe('cancelled');
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('an aborted signal cancels the run before its model is called', async () => {
    const { h, rt } = setup(0);
    const caller = new AbortController();
    caller.abort();
    await expect(rt.run(h, { input: 'x', signal: caller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('a long-lived signal keeps no listener of the runs that ended, succeeded or failed', async () => {
    const { h, rt } = setup(0);
    const server = new AbortController();
    for (let i = 0; i < 20; i++) await rt.run(h, { input: `m${i}`, signal: server.signal });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => rt.run(h, { input: `p${i}`, signal: server.signal })),
    );
    expect(getEventListeners(server.signal, 'abort')).toHaveLength(0);
    expect(server.signal.aborted).toBe(false);
  });
});
