/**
 * js: tool calls, from functions that return at once and from ones that wait: their outputs, their
 * failures, their timeouts and their cancellation. Real modules in temp folders, called by banelings
 * in real runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { loadIn, Scripted } from './helpers.js';

const MODULE = `
const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export function now(args, { signal }) {
  return args.text + (signal.aborted ? ' aborted' : ' live');
}
export const nowSchema = schema;
export async function later(args) {
  await new Promise((r) => setTimeout(r, 5));
  return { text: args.text + ' later' };
}
export const laterSchema = schema;
export function never() {
  return new Promise(() => {});
}
export const neverSchema = { type: 'object', properties: {} };
export function boom() {
  throw new Error('kaboom');
}
export const boomSchema = { type: 'object', properties: {} };
export const watchSchema = { type: 'object', properties: { marker: { type: 'string' } } };
export async function watch(args, ctx) {
  const { writeFileSync } = await import('node:fs');
  await new Promise((r) => setTimeout(r, 20));
  const seen = { scope: ctx.scope === undefined && ctx.tc === undefined, aborted: ctx.signal.aborted };
  ctx.signal.addEventListener('abort', () =>
    writeFileSync(args.marker, JSON.stringify({ ...seen, code: ctx.signal.reason?.code })),
  );
  return new Promise(() => {});
}
`;

function setup(nodes: unknown[]) {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'tools.mjs'), MODULE);
  return loadIn(dir, { name: 'js_now', desc: 'd', nodes });
}

const runtime = () => new Runtime({ providers: { openai: new Scripted([]) }, env: {} });

describe('js: tool calls', () => {
  it('a fan-out mixing functions that return and that wait gives every output in order', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `B${i}`);
    const h = setup([
      { name: 'P', type: 'parallel', branches: names },
      ...names.map((name, i) => ({
        name,
        type: 'tool',
        tool_name: i % 2 === 0 ? 'js:tools.mjs#now' : 'js:tools.mjs#later',
        tool_args: { text: name },
      })),
    ]);
    const rt = runtime();
    for (let round = 0; round < 2; round++) {
      const res = await rt.run(h, {});
      const expected = names.map((n, i) => `## ${n}\n${n}${i % 2 === 0 ? ' live' : ' later'}`).join('\n\n');
      expect(res.output).toBe(expected);
    }
  });

  it('a function that throws at once still fails its node with TOOL', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#boom' }]);
    const err = (await runtime()
      .run(h, {})
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('TOOL');
    expect(err.message).toMatch(/boom threw: kaboom/);
  });

  it('a function that waits still times out', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#never', timeout_ms: 30 }]);
    const err = (await runtime()
      .run(h, {})
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/tool "never" timed out after 30 ms/);
  });

  it('a cancelled run ends a function that waits', async () => {
    const h = setup([{ name: 'A', type: 'tool', tool_name: 'js:tools.mjs#never' }]);
    const ctrl = new AbortController();
    const run = runtime()
      .run(h, { signal: ctrl.signal })
      .catch((e: unknown) => e);
    setTimeout(() => ctrl.abort(), 20);
    const err = (await run) as HatcheryError;
    expect(err.code).toBe('ABORTED');
  });

  it('a hanging function times out after timeout_ms while 200 quick calls with the same timeout end', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `B${i}`);
    const quick = (name: string) => ({
      name,
      type: 'tool',
      tool_name: 'js:tools.mjs#now',
      tool_args: { text: name },
      timeout_ms: 300,
    });
    const dir = tempDir();
    writeFileSync(path.join(dir, 'tools.mjs'), MODULE);
    const spec = (extra: unknown[]) => ({
      name: 'js_timeouts',
      desc: 'd',
      max_steps: 1000,
      nodes: [
        { name: 'P', type: 'parallel', branches: [...names, ...extra.map(() => 'H')] },
        ...names.map(quick),
        ...extra,
      ],
    });
    const rt = runtime();
    const res = await rt.run(loadIn(dir, spec([])), {});
    expect(res.output).toContain('B199 live');
    const hang = { name: 'H', type: 'tool', tool_name: 'js:tools.mjs#never', timeout_ms: 300 };
    const err = (await rt.run(loadIn(dir, spec([hang])), {}).catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/timed out after 300 ms/);
  });

  it("a function's signal, read late, aborts at its timeout, and the function sees nothing of the run", async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'marker.json');
    writeFileSync(path.join(dir, 'tools.mjs'), MODULE);
    const h = loadIn(dir, {
      name: 'js_watch',
      desc: 'd',
      nodes: [
        { name: 'A', type: 'tool', tool_name: 'js:tools.mjs#watch', tool_args: { marker }, timeout_ms: 200 },
      ],
    });
    const err = (await runtime()
      .run(h, {})
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    await new Promise((r) => setTimeout(r, 20));
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toEqual({
      scope: true,
      aborted: false,
      code: 'TIMEOUT',
    });
  });
});
