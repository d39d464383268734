/**
 * Fan-out branches that are one node with no next (most are): outputs, usage, steps, save_output, an
 * on_limit successor, max_steps, errors naming branch and node, and cancellation. Each file runs with
 * a listener and without: listening changes nothing of the result.
 */
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { Hatchery } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load } from '../helpers.js';

const runtime = () =>
  new Runtime({
    providers: {
      openai: new ScriptedProvider((req) => {
        const text = String(req.messages.at(-1)?.content);
        if (text === 'boom') throw new Error('provider down');
        return `re:${text}`;
      }),
    },
    env: {},
  });

/** The run's result (or error) without and with a listener; the listener's events, by type. */
async function both(h: Hatchery, input = 'go') {
  const types: string[] = [];
  const quiet = await runtime()
    .run(h, { input })
    .catch((e: unknown) => e);
  const heard = await runtime()
    .run(h, { input, onEvent: (e) => types.push(e.type) })
    .catch((e: unknown) => e);
  return { quiet, heard, types };
}

describe('one-node branches', () => {
  it('give the same outputs, usage, steps and saved values with a listener and without', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `B${i}`);
    const h = load(
      hatch([
        {
          name: 'P',
          type: 'parallel',
          branches: names,
          join: '{{ branches | length }} {{ ctx.saved }}',
          next: 'Z',
        },
        ...names.map((name, i) =>
          i % 2 === 0
            ? { name, usr_prompt: `{{ ctx.input }} ${name}`, ...(i === 4 ? { save_output: 'saved' } : {}) }
            : echo(name, `echo {{ ctx.input }} ${name}`),
        ),
        echo('Z', '{{ out.P }} {{ out.B3 }} {{ out.B4 }}'),
      ]),
    );
    const { quiet, heard, types } = await both(h);
    expect(types).toContain('node_end');
    expect(quiet).toEqual({ ...(heard as object), runId: (quiet as { runId: string }).runId });
    const r = quiet as { output: string; steps: number; usage: { calls?: number } };
    expect(r.output).toBe('40 re:go B4 echo go B3 re:go B4');
    expect(r.steps).toBe(42);
  });

  it('a loop branch that reaches its limit goes on to its on_limit node', async () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['L', 'E'] },
        { name: 'L', type: 'loop', body: 'Body', until: 'never', max_iterations: 2, on_limit: 'After' },
        echo('Body', 'body {{ ctx.iteration }}'),
        echo('After', 'after <{{ out.L }}>'),
        echo('E', 'e'),
      ]),
    );
    const { quiet, heard } = await both(h);
    expect((quiet as { output: string }).output).toBe('## L\nafter <body 2>\n\n## E\ne');
    expect((heard as { output: string }).output).toBe((quiet as { output: string }).output);
  });

  it('count against max_steps, and the error names the branch', async () => {
    const names = ['A', 'B', 'C', 'D', 'E'];
    const h = load(
      hatch([{ name: 'P', type: 'parallel', branches: names }, ...names.map((n) => echo(n, n))], {
        max_steps: 3,
      }),
    );
    const { quiet, heard } = await both(h);
    const q = quiet as HatcheryError;
    expect(q.code).toBe('MAX_STEPS');
    expect(q.message).toMatch(/^branch "C" failed: the run reached max_steps \(3\)/);
    expect(q.message).toBe((heard as HatcheryError).message);
  });

  it('a failing node fails its branch with its file and node, with a listener and without', async () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'] },
        echo('A', 'a'),
        { name: 'B', usr_prompt: 'boom' },
      ]),
    );
    const { quiet, heard } = await both(h);
    const q = quiet as HatcheryError;
    expect(q.message).toMatch(/^branch "B" failed: .*provider down/);
    expect(q.code).toBe((heard as HatcheryError).code);
    expect(q.message).toBe((heard as HatcheryError).message);
    expect(q.context.branch).toBe('B');
    const inner = q.cause as HatcheryError;
    expect(inner.context.node).toBe('B');
    expect(inner.context.file).toBe(h.file);
  });

  it('map items of a lone node give the same outputs and errors with a listener and without', async () => {
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: '["a","b","c","d","e"]', node: 'X', concurrency: 2 },
        { name: 'X', usr_prompt: '{{ ctx.item }}{{ ctx.index }}' },
      ]),
    );
    const { quiet, heard } = await both(h);
    expect((quiet as { output: string }).output).toBe('["re:a0","re:b1","re:c2","re:d3","re:e4"]');
    expect((heard as { output: string }).output).toBe((quiet as { output: string }).output);
    const bad = load(
      hatch([
        { name: 'M', type: 'map', items: '["a","boom","c"]', node: 'X' },
        { name: 'X', usr_prompt: '{{ ctx.item }}' },
      ]),
    );
    const failed = await both(bad);
    const q = failed.quiet as HatcheryError;
    expect(q.message).toMatch(/^branch "X\[1\]" failed: .*provider down/);
    expect(q.message).toBe((failed.heard as HatcheryError).message);
  });

  it('a cancelled run ends its one-node branches', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `B${i}`);
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: names },
        ...names.map((n) => ({ name: n, usr_prompt: n })),
      ]),
    );
    const slow = new ScriptedProvider(() => 'ok', { delayMs: 5000 });
    const rt = new Runtime({ providers: { openai: slow }, env: {} });
    const ctrl = new AbortController();
    const run = rt.run(h, { input: 'x', signal: ctrl.signal }).catch((e: unknown) => e);
    setTimeout(() => ctrl.abort(), 20);
    expect(((await run) as HatcheryError).code).toBe('ABORTED');
  });
});
