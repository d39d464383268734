import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadHatcheryText } from '../../src/loader/load.js';
import { hatcheryJsonSchema } from '../../src/schema/json-schema.js';
import { hatch, load, problems } from '../helpers.js';

describe('file format: aliases', () => {
  it('accepts every documented spelling of drone fields', () => {
    const h = load(
      hatch([
        { name: 'A', user_prompt: 'a', system_prompt: 's', max_output_tokens: 5, next: 'B' },
        { name: 'B', user_message: 'b', system_message: 's', type: 'ai', next: 'C' },
        { name: 'C', usr_prompt: 'c', sys_prompt: 's', type: 'drone', max_tokens: 7 },
      ]),
    );
    expect([...h.nodes.keys()]).toEqual(['A', 'B', 'C']);
    const defs = h.def.nodes as Record<string, unknown>[];
    expect(defs[0]).toMatchObject({ usr_prompt: 'a', sys_prompt: 's', max_tokens: 5 });
    expect(defs[1]).toMatchObject({ usr_prompt: 'b', sys_prompt: 's' });
  });

  it('accepts description, input and tool as aliases', () => {
    const h = load({
      name: 'aliases',
      description: 'uses aliases',
      input: { topic: 'A topic' },
      nodes: [{ type: 'tool', tool: 'echo', tool_args: { text: '{{ ctx.topic }}' } }],
    });
    expect(h.desc).toBe('uses aliases');
    expect(h.inputs).toEqual({ topic: 'A topic' });
  });

  it('refuses a field given under two spellings', () => {
    expect(problems(hatch([{ usr_prompt: 'a', user_prompt: 'b' }]))).toEqual([
      'nodes/0/user_prompt: "user_prompt" and "usr_prompt" mean the same thing; keep one',
    ]);
  });

  it('allows $ and _ keys anywhere in the structure', () => {
    const h = load({
      $schema: '../schema/hatchery.schema.json',
      _comment: 'top',
      ...hatch([{ _note: 'node comment', $id: 'x', usr_prompt: 'hi' }]),
    });
    expect(h.nodes.size).toBe(1);
  });
});

describe('file format: errors', () => {
  it('names an unknown key and suggests the nearest valid one', () => {
    expect(problems(hatch([{ usr_promt: 'x' }]))).toContain(
      'nodes/0/usr_promt: unknown key "usr_promt": did you mean "usr_prompt"? (usr_prompt is required)',
    );
    expect(problems({ ...hatch([{ usr_prompt: 'x' }]), nodez: [] })).toContain(
      'nodez: unknown key "nodez" (did you mean "nodes"?)',
    );
  });

  it('names an unknown type and suggests the nearest one', () => {
    const p = problems(hatch([{ type: 'tol', tool_name: 'echo' }]));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^nodes\/0\/type: unknown node type "tol" \(did you mean "tool"\?\); valid types: /);
  });

  it('reports every problem at once, each with its JSON path', () => {
    const p = problems({
      name: 'bad name!',
      nodes: [
        { name: 'A', usr_prompt: 'x', next: 'Nope' },
        { name: 'A', usr_prompt: 'y', temperature: 'hot' },
        { type: 'tool' },
      ],
    });
    expect(p).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^name: must be 1 to 64 letters/),
        expect.stringMatching(/^desc: /),
        expect.stringMatching(/^nodes\/1\/temperature: /),
        expect.stringMatching(/^nodes\/2\/tool_name: /),
        'nodes/1/name: duplicate node name "A"; node names must be unique',
        expect.stringMatching(/^nodes\/0\/next: no node named "Nope"/),
      ]),
    );
  });

  it('checks next targets and start when the file loads', () => {
    expect(
      problems(hatch([{ name: 'Writer', usr_prompt: 'x', next: ['Writr', 'END'] }], { start: 'Nobody' })),
    ).toEqual([
      'start: no node named "Nobody"; nodes: Writer',
      'nodes/0/next/0: no node named "Writr" (did you mean "Writer"?); nodes: Writer',
    ]);
  });

  it('refuses invalid tool names, END as a node name and an input called input', () => {
    expect(problems({ ...hatch([{ usr_prompt: 'x' }]), name: 'x'.repeat(65) })[0]).toMatch(/^name: /);
    expect(problems(hatch([{ name: 'END', usr_prompt: 'x' }]))[0]).toMatch(
      /^nodes\/0\/name: END is reserved/,
    );
    expect(problems(hatch([{ usr_prompt: 'x' }], { inputs: { input: 'x' } }))[0]).toMatch(
      /^inputs\/input: "input" is the run/,
    );
  });

  it('reports template syntax errors at load time with the field path', () => {
    const p = problems(hatch([{ name: 'W', usr_prompt: 'Hello {{ ctx.name ' }]));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(
      /^nodes\/0\/usr_prompt: template syntax error at line 1, column \d+ of the template: /,
    );
  });

  it('reports JSON syntax errors with line and column', () => {
    const res = loadHatcheryText('{\n  "name": "x",\n  "desc": "y" oops\n}', 'broken.json');
    expect(res.ok).toBe(false);
    if (!res.ok)
      expect(res.error.message).toMatch(
        /^broken\.json: \(root\) \(line 3, column \d+\): invalid JSON \(near/,
      );
    const empty = loadHatcheryText('', 'empty.json');
    expect(!empty.ok && empty.error.message).toBe(
      'empty.json: (root): the file is empty (expected a JSON object)',
    );
  });

  it('names nodes that have no name uniquely and starts at the first node', () => {
    const h = load(
      hatch([{ usr_prompt: 'a', next: 'node_2' }, { usr_prompt: 'b' }, { name: 'node_3', usr_prompt: 'c' }]),
    );
    expect([...h.nodes.keys()]).toEqual(['node_1', 'node_2', 'node_3']);
    expect(h.start).toBe('node_1');
  });

  it('refuses unknown tool references in banelings, naming the reference', () => {
    expect(problems(hatch([{ type: 'tool', tool_name: 'reed_file' }]))[0]).toMatch(
      /^nodes\/0\/tool_name: unknown tool "reed_file"/,
    );
  });
});

describe('JSON Schema for editors', () => {
  it('is generated from the zod schemas and shipped up to date', () => {
    const shipped = JSON.parse(
      readFileSync(new URL('../../schema/hatchery.schema.json', import.meta.url), 'utf8'),
    );
    expect(shipped).toEqual(hatcheryJsonSchema());
  });

  it('knows aliases, comment keys and the drone fields', () => {
    const s = JSON.stringify(hatcheryJsonSchema());
    for (const key of ['usr_prompt', 'user_prompt', 'system_message', 'tool_name', 'save_output', '^[$_]']) {
      expect(s).toContain(`"${key}"`);
    }
  });
});
