/**
 * Compiled nodes carry what a user relies on through the contract (name, kind, route, limits,
 * preflight, exec) for every kind, and runs of them behave.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledNode } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load } from '../helpers.js';

/** One node of every kind, and drones on both the single-call and the conversation path. */
function everyKind() {
  return load(
    hatch([
      { name: 'D', usr_prompt: 'go {{ ctx.input }}', save_output: 'said', next: 'P' },
      { name: 'P', type: 'parallel', branches: ['A', 'B'], join: '{{ branches | length }}', next: 'M' },
      { name: 'M', type: 'map', items: '["x","y"]', node: 'A', concurrency: 2, next: 'L' },
      { name: 'L', type: 'loop', body: 'B', until: 'b', max_iterations: 3, next: 'S' },
      { name: 'S', type: 'script', cmd: ['cat'], stdin: 'in {{ out.D }}', next: 'K' },
      { name: 'K', type: 'ask', question: 'Which?', max_visits: 2, on_limit: 'C', next: ['C', 'E'] },
      { name: 'C', usr_prompt: 'again', conversation: 'D', next: 'E' },
      echo('A', 'a'),
      echo('B', 'b'),
      { name: 'E', usr_prompt: 'end', write_output: 'out/{{ ctx.input }}.txt' },
    ]),
  );
}

describe('compiled nodes', () => {
  it('carry the definition’s values whatever their kind', () => {
    const h = everyKind();
    const nodes = [...h.nodes.values()];
    expect(new Set(nodes.map((n) => n.kind))).toEqual(
      new Set(['drone', 'parallel', 'map', 'loop', 'script', 'ask', 'baneling']),
    );
    for (const n of nodes) expect(typeof n.exec).toBe('function');
    const byName = (name: string) => h.nodes.get(name) as CompiledNode;
    expect(byName('D')).toMatchObject({ name: 'D', kind: 'drone', index: 0, saveOutput: 'said' });
    expect(byName('D').route).toMatchObject({ kind: 'one', target: 'P' });
    expect(byName('K')).toMatchObject({ maxVisits: 2, onLimit: 'C', index: 5 });
    expect(byName('K').route).toMatchObject({ kind: 'list', targets: ['C', 'E'], fallback: 'E' });
    expect(byName('E').route).toEqual({ kind: 'end' });
    expect(byName('E').writeOutput).toBeDefined();
    // Drones check their model before a run starts (a missing key fails there, not mid-run).
    expect(typeof byName('D').preflight).toBe('function');
    expect(typeof byName('C').preflight).toBe('function');
  });

  it('run: a chain of drones renders each prompt and routes to its successor', async () => {
    const model = new ScriptedProvider((req) => `<${req.messages.at(-1)!.content}>`);
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const h = load(
      hatch([
        { name: 'A', usr_prompt: '{{ ctx.input }}', sys_prompt: 'be {{ ctx.input }}', next: 'B' },
        { name: 'B', usr_prompt: 'then {{ out.A }}', next: 'C' },
        { name: 'C', usr_prompt: '{{ out.A }} and {{ out.B }}' },
      ]),
    );
    const result = await runtime.run(h, { input: 'x' });
    expect(result.outputs).toEqual({ A: '<x>', B: '<then <x>>', C: '<<x> and <then <x>>>' });
    expect(model.calls.map((c) => c.system)).toEqual([
      'be x',
      'You are a helpful assistant.',
      'You are a helpful assistant.',
    ]);
    await runtime.close();
  });

  it('report a missing API key of a drone before any node runs, on every run', async () => {
    const runtime = new Runtime({ providers: {}, env: {} });
    const h = load(hatch([{ name: 'A', usr_prompt: 'hi', model: 'openai:gpt-4o-mini' }]));
    // Failures are not kept by the drone's model cache: the second run is told again.
    for (let i = 0; i < 2; i++)
      await expect(runtime.run(h, { input: 'x' })).rejects.toMatchObject({
        code: 'MISSING_API_KEY',
        context: { node: 'A', field: 'model', variable: 'OPENAI_API_KEY' },
      });
    await runtime.close();
  });
});
