/**
 * A budget stops a parallel fan-out of spawned agents: in the runtime, from the CLI (exit 1, the
 * limit and the partial outputs on stderr and in --json) and over MCP (the error result carries them).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WireBody } from '../fakes/http.js';
import { fakeVendors } from '../fakes/vendors.js';
import { echo, hatch, load, runCli, tempDir } from '../helpers.js';
import { inMemory, jsonOf, spawnCli, textOf } from '../mcp/helpers.js';
import { envOf, exhausted, runtimeFor } from './helpers.js';

const fakes = fakeVendors();
afterEach(() => {
  fakes.openai.reset();
  fakes.anthropic.reset();
});

/** Intro, then a parallel node: a quick branch, and a boss drone that spawns five helper agents at once. */
const def = (budget?: Record<string, number>) =>
  hatch(
    [
      echo('Intro', 'intro done', { next: 'Fan' }),
      { name: 'Fan', type: 'parallel', branches: ['Quick', 'Boss'] },
      echo('Quick', 'quick done'),
      {
        name: 'Boss',
        model: 'openai:gpt-test',
        usr_prompt: 'split {{ ctx.input }}',
        spawn: { templates: [{ name: 'helper', desc: 'helps', sys_prompt: 'Helper: {{ task }}' }] },
      },
    ],
    { name: 'fan', ...(budget ? { budget } : {}) },
  );

/** Answers the boss with a five-agent fan-out, each helper slowly, and a summary once tools answered. */
function script(): void {
  const route = (body: WireBody) => {
    const system = String(body.messages?.[0]?.content ?? '');
    if (system.startsWith('Helper:')) return { text: 'helper answer', delayMs: 5_000 };
    if (body.messages.at(-1)?.role === 'tool') return { text: 'summary' };
    const tasks = [1, 2, 3, 4, 5].map((i) => ({ template: 'helper', task: `part ${i}` }));
    return { toolCalls: [{ name: 'spawn_agents_parallel', args: { tasks } }] };
  };
  for (let i = 0; i < 20; i++) fakes.openai.enqueue(route);
}

/** Requests that reached the fake, by kind. */
function seen() {
  const bodies = fakes.openai.requests.map((r) => r.body);
  return {
    helpers: bodies.filter((b) => String(b.messages?.[0]?.content).startsWith('Helper:')).length,
    summaries: bodies.filter((b) => b.messages?.at(-1)?.role === 'tool').length,
  };
}

function expectPartial(partial: Record<string, unknown>): void {
  expect(partial.Intro).toBe('intro done');
  // Branch nodes are keyed by their branch path.
  const quick = Object.entries(partial).find(([k]) => k.endsWith('/Quick'));
  expect(quick?.[1]).toBe('quick done');
  expect(partial.Fan).toBeUndefined();
}

describe('a budget stops a parallel fan-out of spawned agents', () => {
  it('in the runtime: no model call starts past model_calls, the calls in flight stop, partial outputs kept', async () => {
    script();
    const { err } = await exhausted(runtimeFor(fakes), load(def({ model_calls: 4 })));
    expect(err.message).toMatch(/^budget exhausted: model_calls 4 of 4 spent/);
    expect(err.context).toMatchObject({ limit: 'model_calls', limitValue: 4, spent: { model_calls: 4 } });
    // The boss and at most three helpers were sent; no summary turn, no fifth helper.
    const s = seen();
    expect(fakes.openai.requests.length).toBeLessThanOrEqual(4);
    expect(s.summaries).toBe(0);
    expect(s.helpers).toBeLessThanOrEqual(3);
    expectPartial(err.partial);
    // Helpers that were in flight were cut off rather than awaited for 5 s.
    await expect.poll(() => fakes.openai.disconnects).toBe(s.helpers);
  });

  it('from the CLI: exit 5, the limit and the partial outputs on stderr; --json has them too', async () => {
    script();
    const dir = tempDir();
    const file = path.join(dir, 'fan.json');
    writeFileSync(file, JSON.stringify(def()));
    const env = envOf(fakes);
    const r = await runCli(['run', file, '--input', 'go', '--budget-model-calls', '4'], { env });
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/error \[BUDGET_EXHAUSTED\]: .*budget exhausted: model_calls 4 of 4 spent/);
    expect(r.stderr).toContain('raise budget.model_calls or --budget-model-calls');
    expect(r.stderr).toMatch(
      /partial outputs \(2 nodes finished\):\n--- Intro\nintro done\n--- [\d.]+\/Quick\nquick done\n/,
    );
    expect(seen().summaries).toBe(0);

    fakes.openai.reset();
    script();
    const j = await runCli(['run', file, '--input', 'go', '--budget-model-calls', '4', '--json', '-q'], {
      env,
    });
    expect(j.code).toBe(5);
    const out = JSON.parse(j.stdout);
    expect(out).toMatchObject({ code: 'BUDGET_EXHAUSTED', limit: 'model_calls', limit_value: 4 });
    expect(out.spent.model_calls).toBe(4);
    expectPartial(out.partial);
  });

  it('over MCP: the error result carries the limit, the spend and the partial outputs', async () => {
    script();
    const dir = tempDir();
    writeFileSync(path.join(dir, 'fan.json'), JSON.stringify(def({ model_calls: 4 })));
    const { client, close } = await inMemory(dir, { env: envOf(fakes) });
    try {
      const res = await client.callTool({ name: 'fan', arguments: { input: 'go' } });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toMatch(/budget exhausted: model_calls 4 of 4 spent/);
      // The text block carries the same JSON as structuredContent.
      const s = res.structuredContent as Record<string, unknown>;
      expect(jsonOf(res)).toEqual(s);
      expect(s).toMatchObject({ code: 'BUDGET_EXHAUSTED', limit: 'model_calls', limit_value: 4 });
      expect((s.spent as Record<string, number>).model_calls).toBe(4);
      expectPartial(s.partial as Record<string, unknown>);
      expect(res._meta?.['hatchery/budget']).toMatchObject({ limit: 'model_calls' });
      expect(seen().summaries).toBe(0);
    } finally {
      await close();
    }
  });

  it('over MCP from `serve --budget-model-calls`: the server-wide budget applies to each call', async () => {
    script();
    const dir = tempDir();
    writeFileSync(path.join(dir, 'fan.json'), JSON.stringify(def()));
    const { client, close } = await spawnCli(dir, { env: envOf(fakes), args: ['--budget-model-calls', '4'] });
    try {
      const res = await client.callTool({ name: 'fan', arguments: { input: 'go' } });
      expect(res.isError).toBe(true);
      const s = res.structuredContent as Record<string, unknown>;
      expect(s).toMatchObject({ code: 'BUDGET_EXHAUSTED', limit: 'model_calls', limit_value: 4 });
      expectPartial(s.partial as Record<string, unknown>);
    } finally {
      await close();
    }
  });
});
