/**
 * The events a live view or a tracer needs besides node starts and ends, through the real OpenAI SDK
 * against the fake server: a retried model call (rate limit) before it ends, a model standing in for the
 * MCP client's, and a spawned agent's calls placed under the spawn_agent call that started it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { RunTree } from '../../src/runtime/run-tree.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { fakeVendors } from '../fakes/vendors.js';
import { hatch, load } from '../helpers.js';

const { openai } = fakeVendors();
const KEY = 'sk-events-secret-0123456789';
let runtime: Runtime;

beforeEach(() => {
  openai.reset();
  runtime = new Runtime({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openai.baseURL } });
});
afterEach(() => runtime.close());

async function run(def: unknown): Promise<{ events: RunEvent[]; tree: RunTree }> {
  const h = load(def);
  const events: RunEvent[] = [];
  const tree = new RunTree(h.name, 0);
  await runtime.run(h, {
    input: 'owls',
    onEvent: (e) => {
      events.push(e);
      tree.apply(e);
    },
  });
  return { events, tree };
}

describe('run events for live views and traces', () => {
  it('reports a rate-limited retry while the call waits, then the call with its retry count', async () => {
    openai.enqueue({ status: 429, message: 'slow down', headers: { 'retry-after-ms': '120' } }, 'done');
    const { events, tree } = await run(
      hatch([{ name: 'Draft', usr_prompt: 'write', model: 'openai:gpt-x' }]),
    );
    const types = events.map((e) => e.type);
    expect(types.indexOf('model_retry')).toBeGreaterThan(types.indexOf('node_start'));
    expect(types.indexOf('model_retry')).toBeLessThan(types.indexOf('model_call'));
    const retry = events.find((e) => e.type === 'model_retry');
    expect(retry).toMatchObject({
      node: 'Draft',
      attempt: 1,
      waitMs: 120,
      rateLimited: true,
      model: 'gpt-x',
    });
    expect((retry as { reason: string }).reason).toContain('429');
    expect((retry as { reason: string }).reason).not.toContain(KEY);
    expect(events.find((e) => e.type === 'model_call')).toMatchObject({ retries: 1, step: 1 });
    const call = tree.root.children[0]!.children[0]!;
    expect(call).toMatchObject({ kind: 'model', status: 'done', retries: 1, rateLimited: true });
    expect(call.waitUntil).toBeUndefined();
  });

  it("says which model stood in for the MCP client's when the run has no client", async () => {
    openai.enqueue('from the fallback');
    const { events } = await run(
      hatch([{ name: 'Draft', usr_prompt: 'write', model: 'client', client_fallback: 'openai:gpt-fb' }]),
    );
    expect(events.find((e) => e.type === 'model_call')).toMatchObject({
      model: 'gpt-fb',
      standIn: 'client',
    });
  });

  it("places a spawned agent's model call under the spawn_agent call, not beside its parent's", async () => {
    openai.enqueue(
      { toolCalls: [{ name: 'spawn_agent', args: { template: 'helper', task: 'count owls' } }] },
      'seven owls',
      'summary: seven owls',
    );
    const { events, tree } = await run(
      hatch([
        {
          name: 'Boss',
          usr_prompt: 'go',
          model: 'openai:gpt-x',
          spawn: { templates: [{ name: 'helper', desc: 'helps', sys_prompt: 'Help: {{ task }}' }] },
        },
      ]),
    );
    const start = events.find((e) => e.type === 'tool_start');
    expect(start).toMatchObject({ tool: 'spawn_agent', step: 1, call: 1 });
    const calls = events.filter((e) => e.type === 'model_call');
    expect(calls.map((c) => c.call)).toEqual([undefined, 1, undefined]);
    const boss = tree.root.children[0]!;
    expect(boss.children.map((c) => c.kind)).toEqual(['model', 'tool', 'model']);
    expect(boss.children[1]!.children.map((c) => c.kind)).toEqual(['model']);
  });
});
