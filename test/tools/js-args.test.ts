import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

/**
 * A js: function gets its arguments as zod gives them from its schema (same keys, schema order,
 * defaults filled in), and invalid arguments are refused in zod's words.
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
});
