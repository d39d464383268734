import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ValidationError } from '../../src/core/errors.js';
import { loadHatcheryText } from '../../src/loader/load.js';
import { tempDir } from '../helpers.js';
import { cli } from './loader-helpers.js';

/** The error message of an invalid file's text. */
function errorOf(text: string, file = '/tmp/huge.json'): ValidationError {
  const res = loadHatcheryText(text, file);
  if (res.ok) throw new Error('expected the file to be invalid');
  return res.error;
}

describe('errors of huge broken files stay small', () => {
  it('a 1.1 MB file with a syntax error near the end: line, column and a short excerpt (validate CLI)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'broken.json');
    const big = 'x'.repeat(1_100_000);
    writeFileSync(file, `{\n  "name": "a",\n  "desc": "${big}" oops,\n  "nodes": []\n}`);
    const r = await cli(['validate', file]);
    expect(r.code).toBe(3);
    expect(r.stdout.length).toBeLessThan(1000);
    expect(r.stdout).toMatch(
      /^\S+broken\.json: \(root\) \(line 3, column 1100\d\d\d\): invalid JSON \(near "…x+\\" oops,"\): Expected ',' or '}' after property value\n$/,
    );
  });

  it('a syntax error V8 reports without a position still gets its line and column', () => {
    const text = `{\n  "name": "a",\n  "nodes": [1, 2, x${' '.repeat(200)}]}`;
    const err = errorOf(text);
    expect(err.message).toBe(
      `/tmp/huge.json: (root) (line 3, column 19): invalid JSON (near "  \\"nodes\\": [1, 2, x${' '.repeat(39)}…"): Unexpected token 'x'`,
    );
  });

  it('a 1 MB file with thousands of invalid nodes: the first 20 problems, then a count', () => {
    const nodes = Array.from({ length: 6000 }, (_, i) => ({
      type: 'tool',
      tool_name: 5,
      nxt: `node${i}`,
      next: `nowhere_${'y'.repeat(100)}_${i}`,
    }));
    const text = JSON.stringify({ name: 'many', desc: 'd', nodes });
    expect(text.length).toBeGreaterThan(1_000_000);
    const err = errorOf(text);
    expect(err.message.length).toBeLessThan(4000);
    const lines = err.message.split('\n');
    expect(lines).toHaveLength(21);
    expect(lines[0]).toBe(
      '/tmp/huge.json: nodes/0/tool_name (line 1, column 51): must be a string, not the number 5',
    );
    expect(lines[1]).toBe(
      '/tmp/huge.json: nodes/0/nxt (line 1, column 65): unknown key "nxt" (did you mean "next"?)',
    );
    expect(lines[20]).toBe('/tmp/huge.json: (root): and 11980 more problems (fix these first)');
  });

  it('thousands of valid nodes with unknown targets: short messages, no quadratic work', () => {
    // Before: each message listed every node name (20,000 x 20,000 names) and compared the target with each.
    const nodes = Array.from({ length: 20_000 }, (_, i) => ({
      name: `node${i}`,
      type: 'tool',
      tool_name: 'echo',
      next: `nowhere${i}`,
    }));
    const err = errorOf(JSON.stringify({ name: 'many', desc: 'd', nodes }));
    expect(err.message.length).toBeLessThan(8000);
    expect(err.message.split('\n')[0]).toBe(
      '/tmp/huge.json: nodes/0/next (line 1, column 85): no node named "nowhere0"; nodes: node0, node1, node2, node3, node4, node5, node6, node7, node8, node9, node10, node11, node12, node13, node14, node15, node16, node17, node18, node19 and 19980 more',
    );
  }, 30_000);

  it('huge values and keys are quoted cut to 60 characters', () => {
    const huge = 'z'.repeat(500_000);
    const text = JSON.stringify({
      name: 'a',
      desc: 'd',
      [huge]: 1,
      nodes: [{ type: huge }, { type: 'tool', tool_name: 'echo', next: huge }],
    });
    const err = errorOf(text);
    expect(err.message.length).toBeLessThan(1500);
    const short = `${'z'.repeat(60)}…`;
    // The cut key still finds its line and column (the key starts at column 24).
    expect(err.message).toContain(`: ${'z'.repeat(40)}… (line 1, column 24): unknown key "${short}"`);
    expect(err.message).toContain(
      `nodes/0/type (line 1, column 500039): unknown node type "${short}"; valid types:`,
    );
    expect(err.message).toContain(
      `nodes/1/next (line 1, column 1000084): no node named "${short}"; nodes: node_1, node_2`,
    );
  });

  it('100,000 unknown keys in one node: a short error', () => {
    const node: Record<string, unknown> = { type: 'tool', tool_name: 'echo' };
    for (let i = 0; i < 100_000; i++) node[`tool_nam${i}`] = 1;
    const err = errorOf(JSON.stringify({ name: 'a', desc: 'd', nodes: [node] }));
    expect(err.message.length).toBeLessThan(4000);
    expect(err.message.split('\n')[0]).toBe(
      '/tmp/huge.json: nodes/0/tool_nam0 (line 1, column 67): unknown key "tool_nam0" (did you mean "tool_name"?)',
    );
    expect(err.message).toMatch(/and 99980 more problems/);
  }, 30_000);

  it('keys with the old message separator ("; ") keep their own message', () => {
    const err = errorOf(JSON.stringify({ name: 'a', desc: 'd', 'x; y': 1, nodez: [], nodes: [{}] }));
    expect(err.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'x; y: unknown key "x; y"; valid keys here: name, desc, start, inputs, input_prompt, files, model, client_fallback, max_steps, max_depth, max_concurrent, budget, prices, cache, mcpServers, a2aAgents, output, nodes',
      'nodez: unknown key "nodez" (did you mean "nodes"?)',
      'nodes/0/usr_prompt: missing required key "usr_prompt" (the user message, a Nunjucks template); add it (a string)',
    ]);
  });
});
