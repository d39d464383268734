/**
 * A broken partial (a syntax error, a broken macro, an undefined variable) fails the node with a
 * template error naming the partial and its line, through the built CLI and over MCP: nunjucks
 * compiled partials lazily and threw their syntax errors from a later microtask, which ended the CLI
 * and the stdio server with every session.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { hatcheryDir, spawnCli, textOf, writeHatchery } from '../mcp/helpers.js';

/** Partials of every kind of breakage, and the template of a node using each. */
const CASES = [
  { use: "{% include 'broken.njk' %}", partial: 'broken.njk', line: 2 },
  { use: "{% import 'macros.njk' as m %}{{ m.hi('x') }}", partial: 'macros.njk', line: 1 },
  { use: "{% extends 'broken.njk' %}", partial: 'broken.njk', line: 2 },
  { use: "{% include 'undef.njk' %}", partial: 'undef.njk', line: 3 },
];

function writePartials(dir: string): void {
  writeFileSync(path.join(dir, 'broken.njk'), 'first line\n{{ a b }}\n');
  writeFileSync(path.join(dir, 'macros.njk'), '{% macro hi(x) %}{{ x }\n');
  writeFileSync(path.join(dir, 'undef.njk'), 'one\ntwo\n{{ missing.value }}\n');
}

const node = (name: string, stdin: string) => ({ name, type: 'script', cmd: ['cat'], stdin });

describe('a broken partial', () => {
  it('fails the run with an error naming the partial and its line, and the CLI exits normally', async () => {
    const dir = hatcheryDir();
    writePartials(dir);
    for (const [i, c] of CASES.entries()) {
      const file = writeHatchery(dir, `p${i}.json`, {
        name: `p${i}`,
        desc: 'uses a partial',
        nodes: [node('A', c.use)],
      });
      const r = await runCli(['run', file, '--input', 'x'], { cwd: dir });
      expect(r.code, `${c.use}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`template error in partial "${c.partial}" at line ${c.line}`);
      expect(r.stderr).toContain('node "A"');
      // An uncaught exception prints nunjucks' stack and Node's version.
      expect(r.stderr).not.toMatch(/Node\.js v\d|environment\.js|at Object\./);
    }
  });

  it('is an error result over MCP, and the server goes on serving', async () => {
    const dir = hatcheryDir();
    writePartials(dir);
    for (const [i, c] of CASES.entries()) {
      writeHatchery(dir, `p${i}.json`, { name: `p${i}`, desc: 'uses a partial', nodes: [node('A', c.use)] });
    }
    writeHatchery(dir, 'fine.json', {
      name: 'fine',
      desc: 'works',
      nodes: [node('A', 'fine {{ ctx.input }}')],
    });
    const server = await spawnCli(dir);
    try {
      for (const [i, c] of CASES.entries()) {
        const res = await server.client.callTool({ name: `p${i}`, arguments: { input: 'x' } });
        expect(res.isError, c.use).toBe(true);
        expect(textOf(res)).toContain(`partial "${c.partial}" at line ${c.line}`);
        // Let a late microtask of nunjucks (as the bug had) fire before the next call.
        await new Promise((r) => setTimeout(r, 50));
        const ok = await server.client.callTool({ name: 'fine', arguments: { input: 'still here' } });
        expect(ok.isError, textOf(ok)).toBeFalsy();
        expect(textOf(ok)).toContain('fine still here');
      }
      expect(server.stderr()).not.toMatch(/Node\.js v\d|uncaught/i);
    } finally {
      await server.close();
    }
  });
});
