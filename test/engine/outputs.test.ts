/**
 * A run's `out`: node outputs by name, the keys in the order of their first write with the latest
 * values, the same in templates, in a script's arguments, in the run's result, after a node ran
 * twice, across a fan-out, and in a resumed run.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, seededRandom, tempDir } from '../helpers.js';

/** The first node's prompt. */
const FIRST = '{{ ctx.input }}';

/** A model that answers `<prompt> #<n>`, n counting its calls, and keeps the prompts. */
function counting() {
  const prompts: string[] = [];
  const model = new ScriptedProvider((req: ChatRequest) => {
    const text = String(req.messages.at(-1)!.content);
    prompts.push(text);
    return `${text.slice(0, 40)} #${prompts.length}`;
  });
  return { model, prompts };
}

/** Runs `nodes` and returns what a caller and the model saw. */
async function runOnce(
  nodes: (first: string) => unknown[],
  top: Record<string, unknown> = { max_steps: 50 },
) {
  const { model, prompts } = counting();
  const runtime = new Runtime({ providers: { openai: model }, env: {} });
  const r = await runtime.run(load(hatch(nodes(FIRST), top)), { input: 'go' });
  await runtime.close();
  return { outputs: r.outputs, keys: Object.keys(r.outputs), prompts, output: r.output };
}

describe("a run's outputs", () => {
  it('templates read out.<node> and the result lists every output', async () => {
    const seen = await runOnce((first) => [
      { name: 'A', usr_prompt: first, next: 'B' },
      { name: 'B', usr_prompt: 'B after {{ out.A }}', next: 'C' },
      // Two lookups; then one of a node that has not run yet, with a default (nunjucks renders it).
      { name: 'C', usr_prompt: 'C: {{ out.A }} and {{ out.B }}', next: 'D' },
      { name: 'D', usr_prompt: 'D: {{ out.E | default("none") }} / {{ out.C }}', next: 'E' },
      { name: 'E', usr_prompt: 'E after {{ out.D }}' },
    ]);
    expect(seen.keys).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(seen.prompts[2]).toBe('C: go #1 and B after go #1 #2');
    expect(seen.prompts[3]).toMatch(/^D: none \/ C: go #1/);
    expect(seen.outputs.E).toBe(seen.output);
  });

  it('a node named like a field of Object.prototype is read as its output', async () => {
    const seen = await runOnce((first) => [
      { name: 'valueOf', usr_prompt: first, next: 'B' },
      { name: 'B', usr_prompt: 'B {{ out.valueOf }}' },
    ]);
    expect(seen.prompts[1]).toBe('B go #1');
    expect(seen.keys).toEqual(['valueOf', 'B']);
  });

  it('a fan-out in the middle of a chain reads the outputs before it, and later nodes read its own', async () => {
    const seen = await runOnce((first) => [
      { name: 'A', usr_prompt: first, next: 'P' },
      { name: 'P', type: 'parallel', branches: ['X', 'Y'], next: 'C' },
      { name: 'X', usr_prompt: 'X {{ out.A }}' },
      { name: 'Y', usr_prompt: 'Y {{ out.A }}' },
      { name: 'C', usr_prompt: 'C {{ out.X }} {{ out.P | length }}', next: 'D' },
      { name: 'D', usr_prompt: 'D {{ out.C }}' },
    ]);
    expect(seen.keys).toEqual(['A', 'X', 'Y', 'P', 'C', 'D']);
    expect(seen.prompts.slice(1, 3).sort()).toEqual(['X go #1', 'Y go #1']);
    expect(seen.prompts[4]).toBe(`D ${seen.outputs.C as string}`);
  });

  it('a node run twice keeps its first place in out and its latest output', async () => {
    const seen = await runOnce((first) => [
      { name: 'A', usr_prompt: first, next: 'B' },
      { name: 'B', usr_prompt: 'B {{ out.A }}', next: 'C', max_visits: 2, on_limit: 'D' },
      { name: 'C', usr_prompt: 'C {{ out.B }}', next: 'B' },
      { name: 'D', usr_prompt: 'D {{ out.B }} {{ out.C }}' },
    ]);
    // A, B, C, B and C again, then D: B and C keep the places of their first writes.
    expect(seen.keys).toEqual(['A', 'B', 'C', 'D']);
    expect(seen.prompts).toHaveLength(6);
    expect(seen.outputs.B).toMatch(/#4$/);
    expect(seen.outputs.C).toMatch(/#5$/);
    expect(seen.prompts[5]).toBe(`D ${seen.outputs.B as string} ${seen.outputs.C as string}`);
  });

  it('a script given all outputs sees them in order, and later nodes still read theirs', async () => {
    const dump = {
      name: 'S',
      type: 'script',
      cmd: [process.execPath, '-e', 'process.stdout.write(process.argv[1])', '{{ out | dump }}'],
      next: 'C',
    };
    const seen = await runOnce((first) => [
      { name: 'A', usr_prompt: first, next: 'B' },
      { name: 'B', usr_prompt: 'B {{ out.A }}', next: 'S' },
      dump,
      { name: 'C', usr_prompt: 'C {{ out.B }}' },
    ]);
    expect(JSON.parse(seen.outputs.S as string)).toEqual({ A: 'go #1', B: 'B go #1 #2' });
    expect(Object.keys(JSON.parse(seen.outputs.S as string))).toEqual(['A', 'B']);
    expect(seen.keys).toEqual(['A', 'B', 'S', 'C']);
    expect(seen.prompts[2]).toBe('C B go #1 #2');
  });

  it('600 nodes, run in another order than the file’s, keep the order of their first writes', async () => {
    // The walk visits the file's nodes in a shuffled order; some prompts read back the first node's
    // output and a far one.
    const random = seededRandom(15);
    const order = Array.from({ length: 600 }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const name = (i: number) => `N${order[i]}`;
    const seen = await runOnce(
      (first) => {
        const nodes: unknown[] = new Array(600);
        for (let i = 0; i < 600; i++) {
          const prompt =
            i === 0
              ? first
              : i % 100 === 0
                ? `${name(i)} {{ out.${name(0)} }} {{ out.${name(i - 1)} }} {{ out.${name(i >> 1)} }}`
                : `${name(i)} {{ out.${name(i - 1)} }}`;
          nodes[order[i]!] = { name: name(i), usr_prompt: prompt, ...(i < 599 ? { next: name(i + 1) } : {}) };
        }
        return nodes;
      },
      { max_steps: 700, start: name(0) },
    );
    expect(seen.keys).toEqual(order.map((i) => `N${i}`));
    expect(seen.prompts).toHaveLength(600);
    expect(seen.prompts[300]).toBe(
      `${name(300)} ${seen.outputs[name(0)] as string} ${seen.outputs[name(299)] as string} ${seen.outputs[name(150)] as string}`,
    );
    expect(seen.outputs[name(599)]).toBe(seen.output);
  });

  it("the result's outputs is one object: read twice it is the same, and it can be replaced", async () => {
    const { model } = counting();
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const h = load(hatch([{ name: 'A', usr_prompt: '{{ ctx.input }}' }]));
    const r = await runtime.run(h, { input: 'go' });
    expect(r.outputs).toBe(r.outputs);
    r.outputs.extra = 1;
    expect(r.outputs).toEqual({ A: 'go #1', extra: 1 });
    expect({ ...r }.outputs).toBe(r.outputs);
    expect(JSON.parse(JSON.stringify(r)).outputs).toEqual({ A: 'go #1', extra: 1 });
    expect(Object.keys(r)).toEqual(['runId', 'output', 'value', 'usage', 'steps', 'outputs']);
    r.outputs = {};
    expect(r.outputs).toEqual({});
    await runtime.close();
  });

  it('a resumed run sees the outputs of the nodes served from the journal, in their order', async () => {
    const dir = tempDir('hatchery-outputs-');
    const state = path.join(dir, 'runs');
    let down = true;
    const prompts: string[] = [];
    const model = new ScriptedProvider((req: ChatRequest) => {
      const text = String(req.messages.at(-1)!.content);
      if (down && text.startsWith('C')) throw new Error('the model is down');
      prompts.push(text);
      return `${text} #${prompts.length}`;
    });
    const runtime = new Runtime({
      providers: { openai: model },
      env: {},
      store: new FileRunStore(state, { env: {} }),
      cwd: dir,
    });
    const h = load(
      hatch([
        { name: 'A', model: 'openai:gpt-test', usr_prompt: '{{ ctx.input }}', next: 'B' },
        { name: 'B', model: 'openai:gpt-test', usr_prompt: 'B {{ out.A }}', next: 'C' },
        { name: 'C', model: 'openai:gpt-test', usr_prompt: 'C {{ out.B }}', next: 'D' },
        { name: 'D', model: 'openai:gpt-test', usr_prompt: 'D {{ out.A }} {{ out.C }}' },
      ]),
      dir,
    );
    const failed = await runtime.run(h, { input: 'go' }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(HatcheryError);
    down = false;
    const r = await runtime.resume(String((failed as HatcheryError).context.runId));
    // A and B came from the journal: only C and D asked the model again.
    expect(prompts).toEqual(['go', 'B go #1', 'C B go #1 #2', 'D go #1 C B go #1 #2 #3']);
    expect(Object.keys(r.outputs)).toEqual(['A', 'B', 'C', 'D']);
    expect(r.outputs).toEqual({
      A: 'go #1',
      B: 'B go #1 #2',
      C: 'C B go #1 #2 #3',
      D: 'D go #1 C B go #1 #2 #3 #4',
    });
    await runtime.close();
  });
});
