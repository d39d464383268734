import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { quickCheck } from '../../src/tools/js-call.js';
import { hatch, load, tempDir } from '../helpers.js';

/**
 * A js: function whose JSON Schema is the usual typed properties gets its arguments without zod's
 * copy when they certainly pass; what it receives must be exactly what zod would have given it
 * (same keys, same order, defaults filled in), and invalid arguments are still refused in zod's words.
 */
const MODULE = `
export const echoSchema = {
  type: 'object',
  properties: { text: { type: 'string' }, n: { type: 'integer' }, ok: { type: 'boolean' } },
  required: ['text'],
};
export function echo(args) { return JSON.stringify(args); }

export const withDefaultSchema = {
  type: 'object',
  properties: { text: { type: 'string' }, mode: { type: 'string', default: 'plain' } },
};
export function withDefault(args) { return JSON.stringify(args); }

export const keepSchema = { type: 'object', properties: { text: { type: 'string' } } };
export function keep(args) { args.text = 'changed'; return JSON.stringify(args); }
`;

/** What the function returned for `args`, sent by a model's tool call (arguments no load-time check sees). */
async function call(exportName: string, args: Record<string, unknown>): Promise<string> {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'tool.mjs'), MODULE);
  const h = load(hatch([{ name: 'D', usr_prompt: 'go', tools: [`js:tool.mjs#${exportName}`] }]), dir);
  const model = new ScriptedProvider([{ toolCalls: [{ name: exportName, args }] }, 'done']);
  await new Runtime({ providers: { openai: model }, env: {} }).run(h);
  const results = (model.calls[1]?.messages ?? []).filter((m) => m.role === 'tool');
  return String(results[0]?.content);
}

describe('js: tool arguments', () => {
  it('reach the function as zod gives them: schema order, extra keys last, defaults filled in', async () => {
    expect(await call('echo', { text: 'a', n: 2 })).toBe('{"text":"a","n":2}');
    // Out of the schema's order: zod's output lists the properties in the schema's order.
    expect(await call('echo', { n: 2, text: 'a' })).toBe('{"text":"a","n":2}');
    expect(await call('echo', { text: 'a', extra: 1, ok: true })).toBe('{"text":"a","ok":true,"extra":1}');
    expect(await call('withDefault', { text: 'a' })).toBe('{"text":"a","mode":"plain"}');
    expect(await call('keep', { text: 'a' })).toBe('{"text":"changed"}');
  });

  it('invalid arguments are refused with zod’s message, before the function runs', async () => {
    for (const [args, why] of [
      [{ text: 'a', n: 1.5 }, /invalid arguments for echo: .*n/],
      [{ n: 2 }, /invalid arguments for echo: .*text/],
      [{ text: 'a', ok: 'yes' }, /invalid arguments for echo: .*ok/],
    ] as const)
      expect(await call('echo', args)).toMatch(why);
  });

  it('the copy-free check passes only arguments zod accepts and returns unchanged, in order', () => {
    const schemas: Record<string, unknown>[] = [
      {
        type: 'object',
        properties: { text: { type: 'string' }, n: { type: 'integer' } },
        required: ['text'],
      },
      { type: 'object', properties: { x: { type: 'number', description: 'x' }, b: { type: 'boolean' } } },
      { type: 'object', properties: {} },
      { type: 'object' },
    ];
    const values: unknown[] = [
      's',
      '',
      0,
      -1,
      1.5,
      2 ** 53,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      null,
      [],
      {},
    ];
    const keys = ['text', 'n', 'x', 'b', 'other'];
    let passed = 0;
    let seed = 7;
    const rand = (k: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % k;
    };
    for (const json of schemas) {
      const check = quickCheck(json)!;
      expect(check).toBeTypeOf('function');
      const validator = z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]);
      for (let t = 0; t < 400; t++) {
        const args: Record<string, unknown> = {};
        for (let k = rand(4); k > 0; k--) args[keys[rand(keys.length)]!] = values[rand(values.length)];
        if (!check(args)) continue;
        passed++;
        const parsed = validator.safeParse(args);
        expect(parsed.success).toBe(true);
        expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(args));
        expect(Object.keys(parsed.data as object)).toEqual(Object.keys(args));
      }
    }
    expect(passed).toBeGreaterThan(50);
  });

  it('schemas with anything more than typed properties always go through zod', () => {
    for (const json of [
      { type: 'object', properties: { a: { type: 'string', default: 'x' } } },
      { type: 'object', properties: { a: { type: 'string', enum: ['x'] } } },
      { type: 'object', properties: { a: { type: 'object' } } },
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] },
      { type: 'object', properties: { a: { type: ['string', 'null'] } } },
    ])
      expect(quickCheck(json)).toBeUndefined();
  });
  it('an enumerable key on Object.prototype is never taken for an argument by the copy-free check', () => {
    const check = quickCheck({
      type: 'object',
      properties: { text: { type: 'string' }, n: { type: 'number' } },
      required: ['text'],
    })!;
    expect(check({ text: 'a' })).toBe(true);
    const proto = Object.prototype as Record<string, unknown>;
    try {
      // An inherited key is never taken for an argument: zod decides.
      proto.text = 'polluted';
      expect(check({})).toBe(false);
      expect(check({ text: 'a' })).toBe(true);
      proto.n = 1;
      expect(check({ text: 'a' })).toBe(false);
    } finally {
      delete proto.text;
      delete proto.n;
    }
    expect(check({ text: 'a' })).toBe(true);
  });
});
