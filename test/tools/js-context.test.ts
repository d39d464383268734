/**
 * What a js: function gets besides its arguments: the call's signal, made only when read (the call's
 * guard is made only when the call waits), and nothing of the run. Real modules in temp folders,
 * called by banelings in real runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { loadIn, problemsIn, Scripted } from './helpers.js';

const MODULE = `
const none = { type: 'object', properties: {} };
const seen = (globalThis.__jsContext ??= {});
// Reads its signal at once, then waits for ever: the signal it holds must end with the call.
export function held(args, { signal }) {
  seen.held = signal;
  return new Promise(() => {});
}
export const heldSchema = none;
// Reads its signal only after a wait that outlasts its timeout.
export async function late(args, ctx) {
  await new Promise((r) => setTimeout(r, 80));
  seen.late = ctx.signal.aborted;
  return 'late';
}
export const lateSchema = none;
// Looks at its context.
export function peek(args, ctx) {
  return JSON.stringify({ keys: Object.keys(ctx), scope: typeof ctx.scope, node: typeof ctx.node });
}
export const peekSchema = none;
`;

const seen = () => (globalThis as { __jsContext?: Record<string, unknown> }).__jsContext ?? {};

function setup(nodes: unknown[]) {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'tools.mjs'), MODULE);
  return loadIn(dir, { name: 'js_context', desc: 'd', nodes });
}

const runtime = () => new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
const failure = async (p: Promise<unknown>) => (await p.catch((e: unknown) => e)) as HatcheryError;

describe("a js: function's context", () => {
  it('a signal read at once ends with the call when it times out', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#held', timeout_ms: 30 }]);
    const err = await failure(runtime().run(h, {}));
    expect(err.code).toBe('TIMEOUT');
    const signal = seen().held as AbortSignal;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as HatcheryError).code).toBe('TIMEOUT');
  });

  it('a signal read at once ends with the call when the run is cancelled', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#held' }]);
    const ctrl = new AbortController();
    const run = failure(runtime().run(h, { signal: ctrl.signal }));
    setTimeout(() => ctrl.abort(), 20);
    expect((await run).code).toBe('ABORTED');
    expect((seen().held as AbortSignal).aborted).toBe(true);
  });

  it('a signal first read after the call timed out is already aborted', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#late', timeout_ms: 20 }]);
    expect((await failure(runtime().run(h, {}))).code).toBe('TIMEOUT');
    await new Promise((r) => setTimeout(r, 120));
    expect(seen().late).toBe(true);
  });

  it('shows nothing of the run: only its signal', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#peek' }]);
    const res = await runtime().run(h, {});
    expect(JSON.parse(res.output)).toEqual({ keys: ['signal'], scope: 'undefined', node: 'undefined' });
  });
});

describe('js: references shared by the nodes of one load', () => {
  it('the same reference in files of two folders calls each folder’s own module', async () => {
    const root = tempDir();
    const rt = runtime();
    const outputs: string[] = [];
    for (const name of ['one', 'two']) {
      const dir = path.join(root, name);
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, 'tool.mjs'),
        `export const whoSchema = { type: 'object', properties: {} };\nexport function who() { return '${name}'; }\n`,
      );
      const h = loadIn(dir, {
        name: `f_${name}`,
        desc: 'd',
        nodes: [
          { name: 'P', type: 'parallel', branches: ['A', 'B'] },
          { name: 'A', type: 'tool', tool_name: 'js:./tool.mjs#who' },
          { name: 'B', type: 'tool', tool_name: 'js:./tool.mjs#who' },
        ],
      });
      const res = await rt.run(h, {});
      outputs.push(`${res.outputs.A}/${res.outputs.B}`);
    }
    expect(outputs).toEqual(['one/one', 'two/two']);
  });

  it('a missing module is reported for every node naming it', () => {
    const problems = problemsIn(tempDir(), {
      name: 'missing',
      desc: 'd',
      nodes: [
        { name: 'P', type: 'parallel', branches: ['A', 'B'] },
        { name: 'A', type: 'tool', tool_name: 'js:./nope.mjs#f' },
        { name: 'B', type: 'tool', tool_name: 'js:./nope.mjs#f' },
      ],
    });
    expect(problems.filter((p) => p.includes('nope.mjs'))).toHaveLength(2);
  });
});
