/**
 * Compiled nodes share one shape: the same own fields in the same order, whatever the node's kind
 * (loader/compile.ts `shaped`). Node kinds build theirs with a spread, and V8 gave every such object
 * a hidden class of its own, so in a large file each field read of the walk missed its caches. The
 * fields are what a user relies on through the contract (name, kind, route, limits, exec); these
 * tests check they all survive the reshaping, for every kind, and that runs still behave. A
 * single-call drone is an instance of a class of its own (nodes/drone-single.ts), and so is a
 * baneling (nodes/baneling.ts): the instances of each share one shape, and one exec of their prototype.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledNode } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load } from '../helpers.js';

/** The contract's fields, in the order every compiled node has them. */
const FIELDS = [
  'name',
  'kind',
  'index',
  'route',
  'saveOutput',
  'writeOutput',
  'maxVisits',
  'onLimit',
  'successor',
  'preflight',
  'exec',
];

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
  it('have the same fields in the same order whatever their kind, with the definition’s values', () => {
    const h = everyKind();
    const nodes = [...h.nodes.values()];
    expect(new Set(nodes.map((n) => n.kind))).toEqual(
      new Set(['drone', 'parallel', 'map', 'loop', 'script', 'ask', 'baneling']),
    );
    for (const n of nodes) {
      for (const field of FIELDS) expect(field in n, `${n.name}.${field}`).toBe(true);
      if (Object.getPrototypeOf(n) === Object.prototype) expect(Object.keys(n)).toEqual(FIELDS);
      expect(typeof n.exec).toBe('function');
    }
    // The single-call drone (E) and the banelings (A, B) are instances of their classes; the others
    // are plain objects.
    expect(nodes.filter((n) => Object.getPrototypeOf(n) !== Object.prototype).map((n) => n.name)).toEqual([
      'A',
      'B',
      'E',
    ]);
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

  it('of single-call drones share one shape and one exec, whatever their prompts, models and settings', () => {
    const h = load(
      hatch([
        { name: 'A', usr_prompt: '{{ ctx.input }}', sys_prompt: 'be {{ ctx.input }}', next: 'B' },
        {
          name: 'B',
          usr_prompt: 'then {{ out.A }}',
          model: 'anthropic:claude-x',
          temperature: 0.5,
          next: 'C',
        },
        { name: 'C', usr_prompt: 'plain', save_output: 'c', max_visits: 3, max_tokens: 9 },
      ]),
    );
    const nodes = [...h.nodes.values()];
    const keys = Object.keys(nodes[0]!);
    for (const field of FIELDS.filter((f) => f !== 'preflight' && f !== 'exec'))
      expect(keys).toContain(field);
    for (const n of nodes) {
      expect(Object.keys(n)).toEqual(keys);
      expect(n.exec).toBe(nodes[0]!.exec);
      expect(n.preflight).toBe(nodes[0]!.preflight);
    }
    expect(nodes.map((n) => n.successor?.name)).toEqual(['B', 'C', undefined]);
    expect(nodes[2]).toMatchObject({ name: 'C', saveOutput: 'c', maxVisits: 3, route: { kind: 'end' } });
  });

  it('of banelings share one shape and one exec, whatever their tools and arguments', () => {
    const h = load(
      hatch([
        echo('A', '{{ ctx.input }}', { next: 'B' }),
        {
          name: 'B',
          type: 'tool',
          tool_name: 'list_dir',
          tool_args: { path: '.' },
          save_output: 'b',
          next: 'C',
        },
        echo('C', 'x', { max_visits: 2 }),
      ]),
    );
    const nodes = [...h.nodes.values()];
    const keys = Object.keys(nodes[0]!);
    for (const field of FIELDS.filter((f) => f !== 'exec')) expect(keys).toContain(field);
    for (const n of nodes) {
      expect(Object.keys(n)).toEqual(keys);
      expect(n.exec).toBe(nodes[0]!.exec);
    }
    expect(nodes.map((n) => n.successor?.name)).toEqual(['B', 'C', undefined]);
    expect(nodes[2]).toMatchObject({ name: 'C', kind: 'baneling', maxVisits: 2, route: { kind: 'end' } });
  });

  it('run as before: a single-call chain renders each prompt and routes to its successor', async () => {
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

  it('report a missing API key of a single-call drone before any node runs, on every run', async () => {
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
