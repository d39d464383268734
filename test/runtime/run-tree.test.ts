import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { RunTree, type TreeEntry, walkTree } from '../../src/runtime/run-tree.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

/** The tree as indented lines `kind label status`, in order; the echo banelings' own tool calls left out. */
function shape(root: TreeEntry): string[] {
  const lines: string[] = [];
  walkTree(root, (e, depth) => {
    if (e.kind === 'tool' && e.label === 'echo') return;
    const label = e.kind === 'model' ? 'MODEL' : e.label;
    lines.push(`${'  '.repeat(depth)}${e.kind} ${label} ${e.status}`);
  });
  return lines;
}

/** Runs `h`, applying every event to a tree as it comes (the live view's way). */
async function treeOf(runtime: Runtime, h: ReturnType<typeof load>, input = 'go') {
  const tree = new RunTree(h.name, 0, true);
  const events: RunEvent[] = [];
  let failure: unknown;
  await runtime
    .run(h, {
      input,
      onEvent: (e) => {
        events.push(e);
        tree.apply(e);
      },
    })
    .catch((err: unknown) => {
      failure = err;
    });
  return { tree, events, failure };
}

describe('the run tree', () => {
  it('puts parallel branches under their node, tool calls under their drone, a hatch: run under its call', async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'leaf.json'),
      JSON.stringify(hatch([echo('Leaf', 'leaf got {{ ctx.input }}')], { name: 'leaf' })),
    );
    const model = new ScriptedProvider((req: ChatRequest) => {
      const last = req.messages.at(-1);
      if (last?.role === 'tool') return `used: ${last.content}`;
      return { text: '', toolCalls: [{ id: 't1', name: 'leaf', args: { input: 'x' } }] };
    });
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Ask' },
        echo('A', 'a'),
        echo('B', 'b', { next: 'B2' }),
        echo('B2', 'b2'),
        { name: 'Ask', usr_prompt: 'go', tools: ['hatch:leaf.json'] },
      ]),
      dir,
    );
    const { tree, failure } = await treeOf(new Runtime({ providers: { openai: model }, env: {} }), h);
    expect(failure).toBeUndefined();
    const lines = shape(tree.root);
    // Branch order depends on timing only within the parallel node; everything else is fixed.
    expect(lines[0]).toBe('run test done');
    expect(lines[1]).toBe('  node P done');
    expect(lines.slice(2, 5).sort()).toEqual(['    node A done', '    node B done', '    node B2 done']);
    expect(lines.slice(5)).toEqual([
      '  node Ask done',
      '    model MODEL done',
      '    tool leaf done',
      '      run leaf done',
      '        node Leaf done',
      '    model MODEL done',
    ]);
    const leaf = tree.root.children[1]!.children[1]!;
    expect(leaf.args).toEqual({ input: 'x' });
    expect(leaf.output).toBe('leaf got x');
  });

  it("puts a loop's body under the loop, each iteration, and what follows the loop beside it", async () => {
    const h = load(
      hatch([
        {
          name: 'L',
          type: 'loop',
          body: 'B',
          until: '{{ ctx.iteration == 2 }}',
          max_iterations: 3,
          next: 'After',
        },
        echo('B', 'round {{ ctx.iteration }}', { next: 'B2' }),
        echo('B2', 'checked'),
        echo('After', 'after'),
      ]),
    );
    const { tree, failure } = await treeOf(new Runtime({ env: {} }), h);
    expect(failure).toBeUndefined();
    expect(shape(tree.root)).toEqual([
      'run test done',
      '  node L done',
      '    node B done',
      '    node B2 done',
      '    node B done',
      '    node B2 done',
      '  node After done',
    ]);
    // Every node execution counts, the loop's body included (the view's header and the studio's list).
    expect(tree.stepCount).toBe(6);
  });

  it('marks the failing node and the run failed, with the error', async () => {
    const h = load(hatch([echo('A', 'ok', { next: 'B' }), { name: 'B', type: 'script', cmd: ['false'] }]));
    const { tree, events, failure } = await treeOf(new Runtime({ env: {} }), h);
    expect(failure).toBeDefined();
    expect(events.some((e) => e.type === 'node_error' && e.node === 'B')).toBe(true);
    expect(shape(tree.root)).toEqual(['run test failed', '  node A done', '  node B failed']);
    expect(tree.root.children[1]!.error).toMatch(/B|exit/);
  });
});
