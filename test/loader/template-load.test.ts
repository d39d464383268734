/**
 * Templates are compiled on their first render, not at load (issue 15: start-up): a template that
 * cannot compile must still be a load problem, naming file, node and field, before anything runs.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hatch, problems, runCli, tempDir } from '../helpers.js';
import { spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';

const BROKEN = '{{ ctx.input ';
const GOOD = '{% if ctx.input %}got {{ ctx.input | upper }}{% endif %}';

function echoFile(name: string, text: string): Record<string, unknown> {
  return hatch([{ name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text } }], { name });
}

describe('template errors are load problems although templates compile on first use', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('validate lists the syntax error with its field and the template position', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'broken.json', echoFile('broken', BROKEN));
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`${file}: nodes/0/tool_args/text (line `);
    expect(r.stdout).toContain(
      'template syntax error at line 1, column 1 of the template: expected variable end',
    );
  });

  it('run refuses the file before any node starts', async () => {
    const dir = tempDir();
    const file = writeHatchery(dir, 'broken.json', echoFile('broken', BROKEN));
    const r = await runCli(['run', file, '--input', 'hi']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('nodes/0/tool_args/text');
    expect(r.stderr).toContain('template syntax error');
    expect(r.stderr).not.toContain('started');
  });

  it('serve leaves the broken file out, says why, and serves the good one, rendered on its first call', async () => {
    const dir = tempDir();
    writeHatchery(dir, 'broken.json', echoFile('broken', BROKEN));
    writeHatchery(dir, 'good.json', echoFile('good', GOOD));
    const s = await spawnCli(dir, { args: ['--no-generic-tools'] });
    close = s.close;
    // serve lists files once validated and compiles their templates right after its first answer
    // (issue 15: start-up): the broken file is withdrawn then, and never runs.
    await s.client.listTools();
    const broken = await s.client.callTool({ name: 'broken', arguments: { input: 'hi' } });
    expect(broken.isError).toBe(true);
    expect(textOf(broken)).toContain('template syntax error');
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['good']);
    await waitFor(() => s.stderr().includes('template syntax error'), 10_000, 'the error logged');
    expect(s.stderr()).toContain(`${path.join(dir, 'broken.json')}: nodes/0/tool_args/text`);
    const first = await s.client.callTool({ name: 'good', arguments: { input: 'hi' } });
    expect(textOf(first)).toContain('got HI');
    const second = await s.client.callTool({ name: 'good', arguments: { input: 'there' } });
    expect(textOf(second)).toContain('got THERE');
  });

  it.each([
    ['a number as a dict key', '{{ {1: 2} }}', 'Dict keys must be strings or names'],
    ['an attribute as a set target', '{% set a.b = 1 %}x', 'only a plain name can be assigned'],
    ['a literal as a macro argument', '{% macro m(1) %}x{% endmacro %}', 'macro arguments must be names'],
  ])('what only the compiler rejects is a load problem too: %s', (_what, text, message) => {
    const found = problems(echoFile('t', text));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^nodes\/0\/tool_args\/text: template syntax error at line 1, column \d+ of the template: /,
    );
    expect(found[0]).toContain(message);
  });

  it('macros with default arguments, dict literals and sets of plain names still load', () => {
    const text =
      '{% macro m(a, b=2) %}{{ a }}{{ b }}{% endmacro %}{% set x = {k: 1, "s": 2} %}{{ m(x.k) }}{{ x.s }}';
    expect(problems(echoFile('t', text))).toEqual([]);
  });
});
