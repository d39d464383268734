/**
 * Issue 10: `validate --connect` imports the js: modules a file names and checks the export and the
 * baneling's tool_args against the function's schema; a plain `validate` never runs that code.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

function folder() {
  const dir = tempDir();
  writeFileSync(
    path.join(dir, 'tools.mjs'),
    [
      "import { writeFileSync } from 'node:fs';",
      // The module's top level leaves a mark: proof of whether validate imported it.
      "writeFileSync(new URL('./imported.txt', import.meta.url), 'yes');",
      'export function add({ a, b }) { return String(a + b); }',
      "export const addSchema = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false };",
      "export const notATool = 'text';",
    ].join('\n'),
  );
  const file = path.join(dir, 'sum.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'sum',
      desc: 'adds',
      nodes: [
        {
          name: 'Add',
          type: 'tool',
          tool_name: 'js:./tools.mjs#add',
          tool_args: { a: 1, b: 'two', c: 3 },
          next: 'Missing',
        },
        {
          name: 'Missing',
          type: 'tool',
          tool_name: 'js:./tools.mjs#subtract',
          tool_args: {},
        },
      ],
    }),
  );
  return { dir, file };
}

describe('validate --connect and js: tools', () => {
  it('a plain validate does not import the module', async () => {
    const { dir, file } = folder();
    const res = await runCli(['validate', file]);
    expect(res.code).toBe(0);
    expect(existsSync(path.join(dir, 'imported.txt'))).toBe(false);
  });

  it('--connect reports wrong tool_args, and a missing export, each at its field', async () => {
    const { dir, file } = folder();
    const res = await runCli(['validate', '--connect', file]);
    expect(res.code).toBe(3);
    expect(existsSync(path.join(dir, 'imported.txt'))).toBe(true);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toEqual([
      `${file}: nodes/0/tool_args/b: argument "b" of js:./tools.mjs#add must be a number, not a string ("two")`,
      `${file}: nodes/0/tool_args/c: js:./tools.mjs#add has no argument "c"; its arguments: a, b`,
      `${file}: nodes/1/tool_name: js:./tools.mjs#subtract: the module has no function or tool object "subtract" (exports: add, addSchema)`,
    ]);
  });

  it('--connect refuses a module outside the folders runs may read, without importing it', async () => {
    const outside = tempDir();
    writeFileSync(path.join(outside, 'evil.mjs'), "throw new Error('imported');\nexport function f() {}\n");
    const dir = tempDir();
    const file = path.join(dir, 'x.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'x',
        desc: 'd',
        nodes: [
          { name: 'A', type: 'tool', tool_name: `js:${path.join(outside, 'evil.mjs')}#f`, tool_args: {} },
        ],
      }),
    );
    const res = await runCli(['validate', '--connect', file], { cwd: dir });
    expect(res.code).toBe(3);
    expect(res.stdout).toContain(
      `${file}: nodes/0/tool_name: js:${path.join(outside, 'evil.mjs')}#f: the module "`,
    );
    expect(res.stdout).toContain('is outside the folders runs may read');
    expect(res.stdout).not.toContain('imported');
  });
});

describe('run checks the js: tools of its banelings before the first node', () => {
  it('wrong tool_args of a js: tool fail the run (exit 3) before any node runs', async () => {
    const { dir, file } = folder();
    const marker = path.join(dir, 'first-node-ran.txt');
    const def = JSON.parse(readFileSync(file, 'utf8'));
    // A first node with a visible effect: it must not run.
    def.nodes.unshift({
      name: 'First',
      type: 'tool',
      tool_name: 'write_file',
      tool_args: { path: 'first-node-ran.txt', content: 'x' },
      next: 'Add',
    });
    def.nodes = def.nodes.slice(0, 2);
    delete def.nodes[1].next;
    writeFileSync(file, JSON.stringify(def));
    const res = await runCli(['run', file, '--allow-write', dir], { cwd: dir });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain(
      `${file}: nodes/1/tool_args/b: argument "b" of js:./tools.mjs#add must be a number, not a string ("two")`,
    );
    expect(res.stderr).toContain(
      `${file}: nodes/1/tool_args/c: js:./tools.mjs#add has no argument "c"; its arguments: a, b`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('a run whose js: tool_args fit goes on and calls the tool', async () => {
    const { dir, file } = folder();
    const def = JSON.parse(readFileSync(file, 'utf8'));
    def.nodes = [{ ...def.nodes[0], tool_args: { a: 2, b: 3 } }];
    delete def.nodes[0].next;
    writeFileSync(file, JSON.stringify(def));
    const res = await runCli(['run', file, '-q'], { cwd: dir });
    expect(res).toMatchObject({ code: 0, stdout: '5\n' });
  });
});
