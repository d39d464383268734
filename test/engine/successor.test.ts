/**
 * A node whose `next` is one fixed target is linked to that node when the file loads
 * (CompiledNode.successor), and the walk steps to it without a lookup by name. These check that runs
 * go where the file says in every routing case: a chain follows `next`; a `next` list is decided by
 * the output; a node's own choice (a loop's on_limit, a supervisor's) wins over its fixed `next`; a
 * back edge with max_visits leaves by on_limit; listeners see the same nodes; a resumed run goes on.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import type { RunEvent } from '../../src/engine/contracts.js';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

/** A model that answers what `answer` gives for the prompt, and keeps the prompts in order. */
function model(answer: (prompt: string) => string = (p) => `<${p}>`) {
  const prompts: string[] = [];
  const provider = new ScriptedProvider((req: ChatRequest) => {
    const text = String(req.messages.at(-1)!.content);
    prompts.push(text);
    return answer(text);
  });
  return { provider, prompts };
}

/** The names of the nodes a run ended, in order (node_end events of the top level). */
function ended(events: RunEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'node_end' && e.depth === 0 ? [e.node] : []));
}

describe('fixed successors', () => {
  it('a chain runs its nodes in the order of next, not the order of the file', async () => {
    const { provider, prompts } = model();
    const runtime = new Runtime({ providers: { openai: provider }, env: {} });
    const h = load(
      hatch(
        [
          { name: 'C', usr_prompt: 'C {{ out.B }}' },
          { name: 'A', usr_prompt: '{{ ctx.input }}', next: 'B' },
          { name: 'B', usr_prompt: 'B {{ out.A }}', next: 'C' },
        ],
        { start: 'A' },
      ),
    );
    expect(h.nodes.get('A')!.successor).toBe(h.nodes.get('B'));
    expect(h.nodes.get('C')!.successor).toBeUndefined();
    // Twice, with and without a listener: both walks take the same way.
    let events: RunEvent[] = [];
    for (const listen of [false, true]) {
      events = [];
      prompts.length = 0;
      const onEvent = listen ? (e: RunEvent) => events.push(e) : undefined;
      const r = await runtime.run(h, { input: 'go', onEvent });
      expect(prompts).toEqual(['go', 'B <go>', 'C <B <go>>']);
      expect(Object.keys(r.outputs)).toEqual(['A', 'B', 'C']);
      expect(r.output).toBe('<C <B <go>>>');
    }
    expect(ended(events)).toEqual(['A', 'B', 'C']);
    await runtime.close();
  });

  it('a next list is decided by each output, never short-cut to one target', async () => {
    const { provider } = model((p) => (p.includes('left') ? 'go Left' : 'go Right'));
    const runtime = new Runtime({ providers: { openai: provider }, env: {} });
    const h = load(
      hatch([
        { name: 'Pick', usr_prompt: '{{ ctx.input }}', next: ['Left', 'Right'] },
        echo('Left', 'was left'),
        echo('Right', 'was right'),
      ]),
    );
    expect(h.nodes.get('Pick')!.successor).toBeUndefined();
    expect((await runtime.run(h, { input: 'left please' })).output).toBe('was left');
    expect((await runtime.run(h, { input: 'anything' })).output).toBe('was right');
    await runtime.close();
  });

  it('a node that chooses its successor goes there, not to its fixed next', async () => {
    const { provider } = model(() => 'not yet');
    const runtime = new Runtime({ providers: { openai: provider }, env: {} });
    const h = load(
      hatch([
        {
          name: 'L',
          type: 'loop',
          body: 'Body',
          until: 'DONE',
          max_iterations: 2,
          on_limit: 'Out',
          next: 'Fine',
        },
        { name: 'Body', usr_prompt: 'try' },
        echo('Fine', 'done in time'),
        echo('Out', 'gave up'),
      ]),
    );
    expect(h.nodes.get('L')!.successor).toBe(h.nodes.get('Fine'));
    const r = await runtime.run(h, { input: 'x' });
    expect(r.output).toBe('gave up');
    expect(Object.keys(r.outputs)).not.toContain('Fine');
    await runtime.close();
  });

  it('a back edge runs again until max_visits, then leaves by on_limit', async () => {
    const { provider, prompts } = model((p) => `${p}+`);
    const runtime = new Runtime({ providers: { openai: provider }, env: {} });
    const h = load(
      hatch(
        [
          { name: 'A', usr_prompt: '{{ ctx.input }}', next: 'B' },
          { name: 'B', usr_prompt: '{{ out.C | default(out.A) }}', next: 'C', max_visits: 3, on_limit: 'D' },
          { name: 'C', usr_prompt: '{{ out.B }}', next: 'B' },
          { name: 'D', usr_prompt: 'end {{ out.C }}' },
        ],
        { max_steps: 20 },
      ),
    );
    const events: RunEvent[] = [];
    const r = await runtime.run(h, { input: 'x', onEvent: (e) => events.push(e) });
    expect(ended(events)).toEqual(['A', 'B', 'C', 'B', 'C', 'B', 'C', 'D']);
    // B's fourth visit is one too many: D runs instead, after C's third output.
    expect(prompts.at(-1)).toBe('end x+++++++');
    expect(r.output).toBe('end x++++++++');
    await runtime.close();
  });

  it('a run resumed after a failure goes on along the chain from the node that failed', async () => {
    const dir = tempDir('hatchery-successor-');
    let down = true;
    const { provider, prompts } = model((p) => {
      if (down && p.startsWith('C')) throw new Error('the model is down');
      return `<${p}>`;
    });
    const runtime = new Runtime({
      providers: { openai: provider },
      env: {},
      store: new FileRunStore(path.join(dir, 'runs'), { env: {} }),
      cwd: dir,
    });
    const h = load(
      hatch([
        { name: 'A', model: 'openai:m', usr_prompt: '{{ ctx.input }}', next: 'B' },
        { name: 'B', model: 'openai:m', usr_prompt: 'B {{ out.A }}', next: 'C' },
        { name: 'C', model: 'openai:m', usr_prompt: 'C {{ out.B }}', next: 'D' },
        { name: 'D', model: 'openai:m', usr_prompt: 'D {{ out.C }}' },
      ]),
      dir,
    );
    const failed = await runtime.run(h, { input: 'go' }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(HatcheryError);
    expect((failed as HatcheryError).context.node).toBe('C');
    down = false;
    prompts.length = 0;
    const r = await runtime.resume(String((failed as HatcheryError).context.runId));
    expect(prompts).toEqual(['C <B <go>>', 'D <C <B <go>>>']);
    expect(Object.keys(r.outputs)).toEqual(['A', 'B', 'C', 'D']);
    expect(r.output).toBe('<D <C <B <go>>>>');
    await runtime.close();
  });
});
