/**
 * js: functions that return at once skip the call's timer and cancel watch (Tool.callNow); the ones
 * that wait keep both. Real modules in temp folders, called by banelings in real runs.
 */
import { writeFileSync } from 'node:fs';
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
`;

function setup(nodes: unknown[]) {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'tools.mjs'), MODULE);
  return loadIn(dir, { name: 'js_now', desc: 'd', nodes });
}

const runtime = () => new Runtime({ providers: { openai: new Scripted([]) }, env: {} });

describe('js: calls that end at once', () => {
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
});
