/**
 * --sync-wait: a hatchery tool call whose run outlives the wait returns a run handle instead of
 * dying at the client's timeout; the run goes on and hatchery_result returns its output.
 */
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { hatcheryDir, inMemory, textOf, waitFor, writeHatchery } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A two-drone hatchery whose model answers after `ms`, counting its calls and their aborts. */
function slowSetup(ms: number) {
  const dir = hatcheryDir();
  writeHatchery(dir, 'slow.json', {
    name: 'slow',
    desc: 'slow',
    nodes: [
      { name: 'Think', usr_prompt: '{{ ctx.input }}', next: 'Say' },
      { name: 'Say', usr_prompt: 'say {{ out.Think }}' },
    ],
  });
  const seen = { calls: 0, aborted: 0 };
  const model = new ScriptedProvider(async (req) => {
    const signal = req.signal;
    seen.calls++;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(t);
        seen.aborted++;
        reject(signal.reason);
      });
    });
    const last = req.messages[req.messages.length - 1];
    return `ok ${typeof last?.content === 'string' ? last.content : ''}`;
  });
  return { dir, model, seen };
}

describe('--sync-wait', () => {
  it('hands off a run that outlives the wait: the call returns its run id, the run finishes', async () => {
    const { dir, model, seen } = slowSetup(300);
    const { client, close } = await inMemory(dir, {
      providers: { openai: model },
      server: { syncWaitMs: 200 },
    });
    closers.push(close);
    const progress: Progress[] = [];
    const r = await client.callTool({ name: 'slow', arguments: { input: 'a' } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(r.isError).toBeFalsy();
    const handle = r.structuredContent as { status: string; run_id: string; next_step: string };
    expect(handle.status).toBe('running');
    expect(handle.run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(handle.next_step).toContain('hatchery_result');
    expect(textOf(r)).toContain(handle.run_id);
    const before = progress.length;
    const result = await waitFor(
      async () => {
        const x = await client.callTool({
          name: 'hatchery_result',
          arguments: { run_id: handle.run_id, wait_seconds: 1 },
        });
        return textOf(x).startsWith('still running') ? undefined : x;
      },
      10_000,
      'the result',
    );
    expect(textOf(result)).toBe('ok say ok a');
    expect(seen).toEqual({ calls: 2, aborted: 0 });
    // Nothing more reaches the client about a request it has its answer to.
    expect(progress.length).toBe(before);
  });

  it('answers a run that ends in time as usual, and keeps no handle for it', async () => {
    const { dir, model } = slowSetup(5);
    const { client, core, close } = await inMemory(dir, {
      providers: { openai: model },
      server: { syncWaitMs: 5_000 },
    });
    closers.push(close);
    const r = await client.callTool({ name: 'slow', arguments: { input: 'b' } });
    expect(textOf(r)).toBe('ok say ok b');
    expect(core.runs.all()).toEqual([]);
  });

  it('cancelling the call before the handoff cancels the run', async () => {
    const { dir, model, seen } = slowSetup(2_000);
    const { client, close } = await inMemory(dir, {
      providers: { openai: model },
      server: { syncWaitMs: 10_000 },
    });
    closers.push(close);
    const ac = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { input: 'c' } }, undefined, {
      signal: ac.signal,
    });
    await waitFor(() => seen.calls === 1, 5_000, 'the model call');
    ac.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => seen.aborted === 1, 5_000, 'the model call to be aborted');
    expect(seen.calls).toBe(1);
  });

  it('a client timeout after the handoff does not cancel the run', async () => {
    const { dir, model, seen } = slowSetup(400);
    const { client, close } = await inMemory(dir, {
      providers: { openai: model },
      server: { syncWaitMs: 100 },
    });
    closers.push(close);
    const r = await client.callTool({ name: 'slow', arguments: { input: 'd' } }, undefined, {
      timeout: 300,
    });
    const id = (r.structuredContent as { run_id: string }).run_id;
    await waitFor(
      async () => {
        const s = await client.callTool({ name: 'hatchery_status', arguments: { run_id: id } });
        return (s.structuredContent as { state: string }).state === 'succeeded';
      },
      10_000,
      'the run to succeed',
    );
    expect(seen).toEqual({ calls: 2, aborted: 0 });
  });

  it('without the generic tools there is nothing to poll with: calls wait for their run', async () => {
    const { dir, model } = slowSetup(250);
    const { client, close } = await inMemory(dir, {
      providers: { openai: model },
      server: { syncWaitMs: 50, genericTools: false },
    });
    closers.push(close);
    const r = await client.callTool({ name: 'slow', arguments: { input: 'e' } });
    expect(textOf(r)).toBe('ok say ok e');
  });
});
