import { utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { callTool, loadIn, Scripted, toolResults } from './helpers.js';

const require = createRequire(import.meta.url);
/** zod as a file URL: modules in temp folders have no node_modules to find it in. */
const ZOD = pathToFileURL(path.join(path.dirname(require.resolve('zod/package.json')), 'index.js')).href;

const MODULE = `
import { z } from '${ZOD}';

export function shout(args) {
  return args.text.toUpperCase() + '!';
}
export const shoutSchema = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
};
export const shoutDescription = 'Shouts the text';

export async function stats(args, { signal }) {
  return { words: args.text.split(/\\s+/).length, aborted: signal.aborted };
}
export const statsSchema = z.object({ text: z.string().min(1).describe('Text to count') });

export const verdict = {
  description: 'Judges a number',
  inputSchema: z.object({ n: z.number().int() }),
  async handler({ n }) {
    return n > 10 ? 'big' : { text: 'too small', isError: true };
  },
};

export function explode() {
  throw new Error('kaboom');
}
export const explodeSchema = { type: 'object', properties: {} };

export function noSchema() {
  return 'x';
}
`;

function setup(extraNodes?: unknown[]) {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'tools.mjs'), MODULE);
  const def = {
    name: 'js',
    desc: 'd',
    nodes: extraNodes ?? [
      {
        name: 'Agent',
        usr_prompt: '{{ ctx.input }}',
        tools: ['js:tools.mjs#shout', 'js:tools.mjs#stats', 'js:./tools.mjs#verdict', 'js:tools.mjs#explode'],
      },
    ],
  };
  return { dir, h: loadIn(dir, def) };
}

describe('js: tools', () => {
  it('offers functions with JSON Schema or zod schemas and tool objects, and returns their results', async () => {
    const { h } = setup();
    const model = new Scripted([
      {
        toolCalls: [
          { name: 'shout', args: { text: 'hey' } },
          { name: 'stats', args: { text: 'one two three' } },
          { name: 'verdict', args: { n: 42 } },
          { name: 'verdict', args: { n: 1 } },
        ],
      },
      'done',
    ]);
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(h, { input: 'go' });
    expect(res.output).toBe('done');
    const specs = model.calls[0]!.tools!;
    expect(specs.map((t) => t.name)).toEqual(['shout', 'stats', 'verdict', 'explode']);
    expect(specs[0]).toMatchObject({ description: 'Shouts the text', inputSchema: { required: ['text'] } });
    expect(specs[1]!.inputSchema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string', description: 'Text to count' } },
    });
    expect(specs[1]!.inputSchema.$schema).toBeUndefined();
    expect(specs[2]!.description).toBe('Judges a number');
    const results = toolResults(model, 1);
    expect(results.map((r) => [r.content, r.isError])).toEqual([
      ['HEY!', false],
      ['{"words":3,"aborted":false}', false],
      ['big', false],
      ['too small', true],
    ]);
  });

  it('turns thrown errors and invalid arguments into error results the model sees', async () => {
    const { h } = setup();
    const model = new Scripted([
      {
        toolCalls: [
          { name: 'explode', args: {} },
          { name: 'stats', args: { text: '' } },
          { name: 'verdict', args: { n: 'many' } },
          { name: 'shout', args: { text: 5 } },
        ],
      },
      'recovered',
    ]);
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(h, { input: 'x' });
    expect(res.output).toBe('recovered');
    const results = toolResults(model, 1);
    expect(results.every((r) => r.isError)).toBe(true);
    expect(results[0]!.content).toContain('explode threw: kaboom');
    expect(results[1]!.content).toMatch(/invalid arguments for stats: text:/);
    expect(results[2]!.content).toMatch(/invalid arguments for verdict: n:/);
    expect(results[3]!.content).toMatch(/invalid arguments for shout: text:/);
  });

  it('runs as a baneling and picks up edits to the module', async () => {
    const { dir, h } = setup([
      { type: 'tool', tool_name: 'js:tools.mjs#shout', tool_args: { text: '{{ ctx.input }}' } },
    ]);
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    expect((await rt.run(h, { input: 'a' })).output).toBe('A!');
    const file = path.join(dir, 'tools.mjs');
    writeFileSync(file, MODULE.replace(".toUpperCase() + '!'", " + '?'"));
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    expect((await rt.run(h, { input: 'a' })).output).toBe('a?');
  });

  it('says what is missing: an export, its schema', async () => {
    const { h } = setup([
      { name: 'A', type: 'tool', tool_name: 'js:tools.mjs#nothing', next: 'B' },
      { name: 'B', type: 'tool', tool_name: 'js:tools.mjs#noSchema' },
    ]);
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    const err = (await rt.run(h).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('UNKNOWN_TOOL');
    expect(err.message).toMatch(/has no function or tool object "nothing" \(exports: .*shout/);
    const { h: h2 } = setup([{ type: 'tool', tool_name: 'js:tools.mjs#noSchema' }]);
    await expect(rt.run(h2)).rejects.toThrow(/export "noSchemaSchema"/);
  });

  it('refuses modules outside the allowed roots', async () => {
    const outside = tempDir();
    writeFileSync(path.join(outside, 'evil.mjs'), MODULE);
    const dir = tempDir();
    const rel = path.relative(dir, path.join(outside, 'evil.mjs'));
    const h = loadIn(dir, { name: 'js', desc: 'd', nodes: [{ type: 'tool', tool_name: `js:${rel}#shout` }] });
    const rt = new Runtime({ providers: { openai: new Scripted([]) }, env: {} });
    const err = (await rt.run(h).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('PATH_DENIED');
    const allowed = new Runtime({ providers: { openai: new Scripted([]) }, env: {}, allowRoots: [outside] });
    const ok = loadIn(dir, {
      name: 'js',
      desc: 'd',
      nodes: [{ type: 'tool', tool_name: `js:${rel}#shout`, tool_args: { text: 'ok' } }],
    });
    expect((await allowed.run(ok)).output).toBe('OK!');
  });

  it('tells the model about a tool it does not have and about unparsable arguments', async () => {
    const { h } = setup();
    const model = new Scripted([
      {
        toolCalls: [
          { name: 'shoot', args: {} },
          { name: 'shout', args: {}, argsError: 'Unexpected token } in JSON' },
        ],
      },
      callTool('shout', { text: 'fine' }),
      'end',
    ]);
    await new Runtime({ providers: { openai: model }, env: {} }).run(h, { input: 'x' });
    const [unknown, bad] = toolResults(model, 1);
    expect(unknown).toMatchObject({
      isError: true,
      content: expect.stringContaining('unknown tool "shoot"'),
    });
    expect(unknown!.content).toContain('available tools: shout, stats, verdict, explode');
    expect(bad).toMatchObject({
      isError: true,
      content: expect.stringContaining('invalid arguments for shout'),
    });
    expect(toolResults(model, 2)[2]).toMatchObject({ isError: false, content: 'FINE!' });
  });
});
