/**
 * Issue 10: a baneling's tool_args are checked at load time against the tool's input schema when it
 * is known then (built-ins, node:, hatch:), and misspelled tool names get "did you mean".
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { problemsIn } from '../tools/helpers.js';

const tool = (tool_name: string, tool_args?: unknown, inputs?: Record<string, string>) => ({
  name: 'm',
  desc: 'd',
  ...(inputs ? { inputs } : {}),
  nodes: [{ name: 'T', type: 'tool', tool_name, tool_args }],
});

describe('tool_args of built-in tools', () => {
  it('names a missing required argument and an unknown one with did-you-mean', () => {
    expect(problemsIn(tempDir(), tool('read_file', { pth: 'a.txt' }))).toEqual([
      'nodes/0/tool_args: read_file needs argument "path" (arguments of read_file: path)',
      'nodes/0/tool_args/pth: read_file has no argument "pth" (did you mean "path"?); its arguments: path',
    ]);
  });

  it('checks the types of constant values, nested ones too, and enums', () => {
    expect(problemsIn(tempDir(), tool('write_file', { path: 1, content: 'x', append: 'yes' }))).toEqual([
      'nodes/0/tool_args/path: argument "path" of write_file must be a string, not a number (1)',
      'nodes/0/tool_args/append: argument "append" of write_file must be a boolean, not a string ("yes")',
    ]);
    expect(
      problemsIn(tempDir(), tool('http_request', { url: 'http://x', method: 'GTE', headers: { a: 1 } })),
    ).toEqual([
      'nodes/0/tool_args/method: argument "method" of http_request is "GTE" (did you mean "GET"?); allowed: "GET", "POST"',
      'nodes/0/tool_args/headers/a: argument "headers.a" of http_request must be a string, not a number (1)',
    ]);
    expect(problemsIn(tempDir(), tool('shell_exec', { argv: 'ls' }))).toEqual([
      'nodes/0/tool_args/argv: argument "argv" of shell_exec must be an array, not a string ("ls")',
    ]);
  });

  it('skips values known only when rendered: one expression keeps any type, other templates are text', () => {
    expect(
      problemsIn(
        tempDir(),
        tool('list_dir', { path: '{{ ctx.dir }}', recursive: '{{ ctx.deep }}' }, { dir: 'd', deep: 'd' }),
      ),
    ).toEqual([]);
    expect(
      problemsIn(
        tempDir(),
        tool('write_file', { path: 'a', content: 'x', append: 'is {{ ctx.a }}' }, { a: 'a' }),
      ),
    ).toEqual([
      'nodes/0/tool_args/append: argument "append" of write_file must be a boolean, not a string ("is {{ ctx.a }}")',
    ]);
  });
});

describe('tool_args of node: and hatch: tools', () => {
  it('node: wants one string input (input_str, the original name, counts)', () => {
    expect(problemsIn(tempDir(), tool('node:T', { inpt: 'x' }))).toEqual([
      'nodes/0/tool_args: node:T needs argument "input" (arguments of node:T: input)',
      'nodes/0/tool_args/inpt: node:T has no argument "inpt" (did you mean "input"?); its arguments: input',
    ]);
    expect(problemsIn(tempDir(), tool('node:T', { input_str: 'x' }))).toEqual([]);
  });

  it("hatch: wants input plus the sub-hatchery's declared inputs", () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'sub.json'),
      JSON.stringify({
        name: 'sub',
        desc: 'd',
        inputs: { tone: 'Tone' },
        nodes: [{ name: 'S', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.tone }}' } }],
      }),
    );
    expect(problemsIn(dir, tool('hatch:sub.json', { input: 'x', tonee: 'dry' }))).toEqual([
      'nodes/0/tool_args: hatch:sub.json needs argument "tone" (arguments of hatch:sub.json: input, tone)',
      'nodes/0/tool_args/tonee: hatch:sub.json has no argument "tonee" (did you mean "tone"?); its arguments: input, tone',
    ]);
    expect(problemsIn(dir, tool('hatch:sub.json', { input: 'x', tone: 'dry' }))).toEqual([]);
  });

  it('js: tools are not checked at load time (their schema needs the module imported)', () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'lib.mjs'),
      'export const f = () => "x"; export const fSchema = { type: "object", properties: {} };',
    );
    expect(problemsIn(dir, tool('js:lib.mjs#f', { anything: 1 }))).toEqual([]);
  });
});

describe('misspelled tool names', () => {
  it('suggests the nearest built-in for a baneling and a drone', () => {
    const known =
      'use a built-in (read_file, write_file, echo, list_dir, http_request, shell_exec), hatch:<file>, node:<Name>, mcp:<server>[/<tool>], js:<module>#<export> or a2a:<agent>[#<skill>]';
    expect(problemsIn(tempDir(), tool('reed_file', {}))).toEqual([
      `nodes/0/tool_name: unknown tool "reed_file" (did you mean "read_file"?): ${known}`,
    ]);
    expect(
      problemsIn(tempDir(), {
        name: 'm',
        desc: 'd',
        nodes: [{ name: 'A', usr_prompt: 'u', tools: ['list_dirs'] }],
      }),
    ).toEqual([`nodes/0/tools/0: unknown tool "list_dirs" (did you mean "list_dir"?): ${known}`]);
  });

  it('points a bare node name to node: and a bare file name to hatch:', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'sub.json'), '{}');
    const def = {
      name: 'm',
      desc: 'd',
      nodes: [
        { name: 'A', usr_prompt: 'u', tools: ['Summarize', 'sub.json'], next: 'Summarize' },
        { name: 'Summarize', usr_prompt: 'u' },
      ],
    };
    const found = problemsIn(dir, def);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(
      /^nodes\/0\/tools\/0: unknown tool "Summarize": use a built-in .*; to call the node "Summarize" as a tool, write "node:Summarize"$/,
    );
    expect(found[1]).toMatch(
      /^nodes\/0\/tools\/1: unknown tool "sub.json": use a built-in .*; to call the hatchery file as a tool, write "hatch:sub.json"$/,
    );
  });

  it('suggests the nearest prefix', () => {
    expect(problemsIn(tempDir(), tool('hatc:x.json', {}))).toEqual([
      'nodes/0/tool_name: unknown tool reference prefix "hatc:" in "hatc:x.json" (did you mean "hatch:"?): use hatch:, node:, mcp:, js: or a2a:',
    ]);
  });
});
