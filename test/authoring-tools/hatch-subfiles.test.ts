/**
 * Issue 10: hatch: sub-files are validated recursively at load time, with the chain of files in the
 * message; cycles stop (a file may hatch itself, bounded at run time by max_depth).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ValidationError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { loadIn, problemsIn } from '../tools/helpers.js';

const write = (dir: string, name: string, def: unknown) =>
  writeFileSync(path.join(dir, name), JSON.stringify(def));
const hatching = (name: string, target: string, extra: Record<string, unknown> = {}) => ({
  name,
  desc: 'd',
  nodes: [{ name: 'H', type: 'tool', tool_name: `hatch:${target}`, tool_args: { input: 'x' }, ...extra }],
});
const broken = { name: 'leaf', desc: 'd', nodes: [{ name: 'L', usr_prompt: '{{ ctx.input }' }] };
const SYNTAX = 'template syntax error at line 1, column 14 of the template: expected variable end';

describe('hatch: sub-files at load time', () => {
  it('names the chain of files down to the broken one', () => {
    const dir = tempDir();
    write(dir, 'sub.json', hatching('sub', 'leaf.json'));
    write(dir, 'leaf.json', broken);
    const main = {
      name: 'main',
      desc: 'd',
      nodes: [
        { name: 'A', type: 'tool', tool_name: 'echo', tool_args: { text: 'a' }, next: 'B' },
        { name: 'B', type: 'tool', tool_name: 'hatch:sub.json', tool_args: { input: 'x' } },
      ],
    };
    expect(problemsIn(dir, main)).toEqual([
      `nodes/1/tool_name: hatch:sub.json is invalid: sub.json → leaf.json: nodes/0/usr_prompt: ${SYNTAX}`,
    ]);
  });

  it("reports a drone's hatch: tool and a sub-file in a folder", () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'lib'));
    write(dir, 'lib/leaf.json', broken);
    expect(
      problemsIn(dir, {
        name: 'm',
        desc: 'd',
        nodes: [{ name: 'A', usr_prompt: 'u', tools: ['hatch:lib/leaf.json'] }],
      }),
    ).toEqual([
      `nodes/0/tools/0: hatch:lib/leaf.json is invalid: lib/leaf.json: nodes/0/usr_prompt: ${SYNTAX}`,
    ]);
  });

  it("keeps a sub-file problem's fix, at the position of the parent's tool_name, not the sub-file's", () => {
    const dir = tempDir();
    write(dir, 'leaf.json', {
      name: 'leaf',
      desc: 'd',
      nodes: [{ name: 'L', usr_prompt: '\n\n{{ ctx.zz }}' }],
    });
    let err: ValidationError | undefined;
    try {
      loadIn(dir, hatching('main', 'leaf.json'));
    } catch (e) {
      err = e as ValidationError;
    }
    expect(err?.problems).toEqual([
      {
        path: 'nodes/0/tool_name',
        line: 8,
        column: 7,
        message:
          'hatch:leaf.json is invalid: leaf.json: nodes/0/usr_prompt: ctx.zz (line 3, column 4 of the template) is not defined when "L" runs: no declared input, files entry or save_output has that name',
        fix: 'declare "zz" in "inputs", or add "save_output": "zz" to a node that runs before "L", or give a default: {{ ctx.zz | default("") }}',
      },
    ]);
  });

  it('stops at cycles: a file that hatches itself, and two that hatch each other, are valid', () => {
    const dir = tempDir();
    write(dir, 'self.json', hatching('self', 'self.json'));
    expect(problemsIn(dir, hatching('main', 'self.json'))).toEqual([]);
    write(dir, 'a.json', hatching('a', 'b.json'));
    write(dir, 'b.json', hatching('b', 'a.json'));
    expect(problemsIn(dir, hatching('main', 'a.json'))).toEqual([]);
    // The top-level file itself, hatched back by its sub-file.
    write(dir, 'back.json', hatching('back', 'main.json'));
    expect(problemsIn(dir, hatching('main', 'back.json'))).toEqual([]);
  });

  it('reports a broken file reached on both sides of a diamond from each side', () => {
    const dir = tempDir();
    write(dir, 'left.json', hatching('left', 'leaf.json'));
    write(dir, 'right.json', hatching('right', 'leaf.json'));
    write(dir, 'leaf.json', broken);
    const main = {
      name: 'main',
      desc: 'd',
      nodes: [{ name: 'A', usr_prompt: 'u', tools: ['hatch:left.json', 'hatch:right.json'] }],
    };
    expect(problemsIn(dir, main)).toEqual([
      `nodes/0/tools/0: hatch:left.json is invalid: left.json → leaf.json: nodes/0/usr_prompt: ${SYNTAX}`,
      `nodes/0/tools/1: hatch:right.json is invalid: right.json → leaf.json: nodes/0/usr_prompt: ${SYNTAX}`,
    ]);
  });

  it('reads sub-files only below the read roots of the runtime that loads', async () => {
    const dir = tempDir();
    const outside = tempDir();
    write(outside, 'leaf.json', broken);
    const rel = path.relative(dir, path.join(outside, 'leaf.json'));
    write(dir, 'main.json', hatching('main', rel));
    const err = await new Runtime({ env: {}, cwd: dir }).load(path.join(dir, 'main.json')).catch((e) => e);
    expect(err.message).toBe(
      `${path.join(dir, 'main.json')}: nodes/0/tool_name (line 1, column 62): "hatch:${rel}": ${path.join(outside, 'leaf.json')} is outside the folders runs may read (${dir}); move the file below one of them, or allow its folder with --allow-root DIR`,
    );
    // With its folder allowed the sub-file is read, and found broken.
    const err2 = await new Runtime({ env: {}, cwd: dir, allowRoots: [outside] })
      .load(path.join(dir, 'main.json'))
      .catch((e) => e);
    expect(err2.message).toContain(`hatch:${rel} is invalid: ${rel}: nodes/0/usr_prompt: ${SYNTAX}`);
  });

  it('a link inside the folder to a file outside the roots is not read', async () => {
    const dir = tempDir();
    const outside = tempDir();
    write(outside, 'leaf.json', broken);
    symlinkSync(path.join(outside, 'leaf.json'), path.join(dir, 'link.json'));
    write(dir, 'main.json', hatching('main', 'link.json'));
    const err = await new Runtime({ env: {}, cwd: dir }).load(path.join(dir, 'main.json')).catch((e) => e);
    expect(err.message).toContain(
      `"hatch:link.json": ${path.join(dir, 'link.json')} is outside the folders runs may read (${dir})`,
    );
  });
});

describe('hatch: sub-files of spawn templates', () => {
  it('are reported at the template tool path', () => {
    const dir = tempDir();
    write(dir, 'leaf.json', broken);
    const main = {
      name: 'm',
      desc: 'd',
      nodes: [
        {
          name: 'A',
          usr_prompt: 'u',
          spawn: { templates: [{ name: 't', desc: 'd', tools: ['hatch:leaf.json'] }] },
        },
      ],
    };
    expect(problemsIn(dir, main)).toEqual([
      `nodes/0/spawn/templates/0/tools/0: hatch:leaf.json is invalid: leaf.json: nodes/0/usr_prompt: ${SYNTAX}`,
    ]);
  });
});

describe('dependencies of hatch: chains', () => {
  it('lists every file below a hatch: file, so hot reload sees a change two levels down', () => {
    const dir = tempDir();
    write(dir, 'middle.json', hatching('middle', 'leaf.json'));
    write(dir, 'leaf.json', { name: 'leaf', desc: 'd', nodes: [{ name: 'L', usr_prompt: 'u' }] });
    const h = loadIn(dir, hatching('main', 'middle.json'));
    expect([...h.dependencies].sort()).toEqual([path.join(dir, 'leaf.json'), path.join(dir, 'middle.json')]);
  });
});
