/**
 * Issue 10, format fix: a tool_args string that is exactly one expression keeps the value's JSON
 * type; mixed text stays a string, and so does an argument the tool's schema declares a string.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HatcheryError, ValidationError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { loadIn, Scripted } from '../tools/helpers.js';

/** A js: tool that answers the JSON of the arguments it got; its schema leaves their types open. */
function showArgs(dir: string): string {
  writeFileSync(
    path.join(dir, 'show.mjs'),
    'export const show = (args) => JSON.stringify(args);\nexport const showSchema = { type: "object" };\n',
  );
  return 'js:show.mjs#show';
}

async function argsOf(toolArgs: Record<string, unknown>, input = '42'): Promise<unknown> {
  const dir = tempDir();
  const h = loadIn(dir, {
    name: 'm',
    desc: 'd',
    nodes: [
      {
        name: 'Plan',
        type: 'tool',
        tool_name: 'echo',
        tool_args: { text: '{"items": [1, "two", {"k": null}]}' },
        save_output: 'plan',
        next: 'Call',
      },
      { name: 'Call', type: 'tool', tool_name: showArgs(dir), tool_args: toolArgs },
    ],
  });
  const rt = new Runtime({ env: {}, cwd: dir });
  try {
    return JSON.parse((await rt.run(h, { input })).output);
  } finally {
    await rt.close();
  }
}

describe('one-expression tool arguments keep their type', () => {
  it('numbers, booleans, null, objects and arrays arrive as JSON values', async () => {
    expect(
      await argsOf({
        n: '{{ ctx.input | int }}',
        f: '{{ 1.5 }}',
        yes: '{{ ctx.input == "42" }}',
        none: '{{ none }}',
        obj: '{{ {"a": [1, 2]} }}',
        list: '{{ [1, "x", true] }}',
        trimmed: '{{- ctx.input | int -}}',
        fallback: '{{ ctx.missing | default(7) }}',
      }),
    ).toEqual({
      n: 42,
      f: 1.5,
      yes: true,
      none: null,
      obj: { a: [1, 2] },
      list: [1, 'x', true],
      trimmed: 42,
      fallback: 7,
    });
  });

  it('a string stays a string, also one that looks like a number; mixed text is text', async () => {
    expect(
      await argsOf({
        s: '{{ ctx.input }}',
        mixed: 'n={{ ctx.input | int }}',
        two: '{{ ctx.input }}{{ ctx.input }}',
      }),
    ).toEqual({ s: '42', mixed: 'n=42', two: '4242' });
  });

  it('passes a save_output value of an earlier node as it is', async () => {
    expect(await argsOf({ plan: '{{ ctx.plan }}' })).toEqual({ plan: '{"items": [1, "two", {"k": null}]}' });
  });

  it('passes a structured node output (out.Plan.items) as an array', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      nodes: [
        {
          name: 'Plan',
          usr_prompt: 'plan',
          model: 'openai:gpt-4o',
          output_schema: {
            type: 'object',
            properties: { items: { type: 'array', items: { type: 'string' } } },
            required: ['items'],
          },
          next: 'Call',
        },
        {
          name: 'Call',
          type: 'tool',
          tool_name: showArgs(dir),
          tool_args: { items: '{{ out.Plan.items }}' },
        },
      ],
    });
    const model = new Scripted(['{"items": ["a", "b"]}']);
    const rt = new Runtime({ env: {}, cwd: dir, providers: { openai: model } });
    expect(JSON.parse((await rt.run(h)).output)).toEqual({ items: ['a', 'b'] });
    await rt.close();
  });

  it("is the rendered text when the tool's schema wants a string (echo's text: arrays print as JSON)", async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      nodes: [{ name: 'E', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ [1, 2] }}' } }],
    });
    expect((await new Runtime({ env: {}, cwd: dir }).run(h)).output).toBe('[1,2]');
  });

  it('an undefined variable is reported in the words of the argument, once', async () => {
    // Never set: the load-time analysis names the argument as written (ctx is at column 4 of it).
    const err = (await argsOf({ v: '{{ ctx.nope }}' }).catch((e: unknown) => e)) as ValidationError;
    expect(err.problems).toEqual([
      {
        path: 'nodes/1/tool_args/v',
        line: 20,
        column: 9,
        message:
          'ctx.nope (line 1, column 4 of the template) is not defined when "Call" runs: no declared input, files entry or save_output has that name',
        fix: 'declare "nope" in "inputs", or add "save_output": "nope" to a node that runs before "Call", or give a default: {{ ctx.nope | default("") }}',
      },
    ]);
  });

  it('an argument set on some paths only fails at run time in the words of the argument', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'm',
      desc: 'd',
      nodes: [
        // "skip" names neither node: the last entry of next, Call, runs and Save is passed by.
        {
          name: 'Start',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: 'skip' },
          next: ['Save', 'Call'],
        },
        {
          name: 'Save',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: 'x' },
          save_output: 'nope',
          next: 'Call',
        },
        { name: 'Call', type: 'tool', tool_name: showArgs(dir), tool_args: { v: '{{ ctx.nope }}' } },
      ],
    });
    expect(h.warnings.map((w) => w.message)).toEqual([
      'ctx.nope (line 1, column 4 of the template) may be undefined when "Call" runs: it is set on some paths to this node but not on all (saved by "Save")',
    ]);
    const rt = new Runtime({ env: {}, cwd: dir });
    const err = (await rt.run(h, { input: 'i' }).catch((e: unknown) => e)) as HatcheryError;
    await rt.close();
    expect(err.message).toContain(
      'undefined variable `ctx.nope` (line 1). Define it (declared input, files entry, save_output of an earlier node) or give a default: {{ ctx.nope | default("") }}',
    );
    expect(err.context).toMatchObject({ node: 'Call', field: 'tool_args/v' });
  });
});
