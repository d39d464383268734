import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, runCli, tempDir } from '../helpers.js';
import { writeHatchery } from '../mcp/helpers.js';

async function render(dir: string, text: string, runtime = new Runtime({ env: {} })): Promise<string> {
  return (await runtime.run(load(hatch([echo('Show', text)]), dir), { input: 'hi' })).output;
}

async function refusal(dir: string, text: string): Promise<HatcheryError> {
  try {
    await render(dir, text);
  } catch (err) {
    expect(err).toBeInstanceOf(HatcheryError);
    return err as HatcheryError;
  }
  throw new Error(`expected ${text} to be refused`);
}

/** A hatchery folder with templates to include, and a secret outside it (also behind a symlink). */
function folders() {
  const outside = tempDir();
  writeFileSync(path.join(outside, 'secret.njk'), 'TOP-SECRET');
  const dir = tempDir();
  mkdirSync(path.join(dir, 'parts'));
  writeFileSync(path.join(dir, 'parts', 'greet.njk'), 'Hello {{ ctx.input }}');
  writeFileSync(
    path.join(dir, 'parts', 'macros.njk'),
    '{% macro box(x) %}[{{ x | upper }}{{ ":" ~ caller() if caller else "" }}]{% endmacro %}',
  );
  writeFileSync(path.join(dir, 'parts', 'base.njk'), '<{% block body %}base{% endblock %}>');
  writeFileSync(path.join(dir, 'parts', 'loop.njk'), '{% include "parts/loop.njk" %}');
  symlinkSync(path.join(outside, 'secret.njk'), path.join(dir, 'parts', 'link.njk'));
  return { dir, outside, secret: path.join(outside, 'secret.njk') };
}

describe('include, import and extends', () => {
  it('load templates from the hatchery folder: include, import, from-import with caller, extends with super', async () => {
    const { dir } = folders();
    expect(await render(dir, '{% include "parts/greet.njk" %}!')).toBe('Hello hi!');
    expect(await render(dir, '{% import "parts/macros.njk" as m %}{{ m.box("a") }}')).toBe('[A]');
    expect(
      await render(dir, '{% from "parts/macros.njk" import box %}{% call box("b") %}in{% endcall %}'),
    ).toBe('[B:in]');
    expect(
      await render(dir, '{% extends "parts/base.njk" %}{% block body %}child+{{ super() }}{% endblock %}'),
    ).toBe('<child+base>');
    expect(await render(dir, '[{% include "parts/none.njk" ignore missing %}]')).toBe('[]');
    expect((await refusal(dir, '{% include "parts/none.njk" %}')).message).toMatch(
      /template not found: parts\/none\.njk/,
    );
  });

  it('refuse every file outside the roots, exactly where fread refuses it (.., absolute, symlink)', async () => {
    const { dir, secret } = folders();
    for (const p of [path.relative(dir, secret), secret, 'parts/link.njk', '../../../../../etc/passwd']) {
      const viaFread = await refusal(dir, `{{ fread("${p}") }}`);
      expect(viaFread.code).toBe('PATH_DENIED');
      for (const tag of [
        `{% include "${p}" %}`,
        `{% import "${p}" as m %}x`,
        `{% from "${p}" import box %}x`,
        `{% extends "${p}" %}`,
      ]) {
        const err = await refusal(dir, tag);
        expect(err.code, tag).toBe('PATH_DENIED');
        expect(err.message).toContain(`path "${p}"`);
        expect(err.message).not.toContain('TOP-SECRET');
        expect(err.context).toMatchObject({ node: 'Show', field: 'tool_args/text' });
      }
    }
  });

  it('follow --allow-root like fread does', async () => {
    const { dir, outside, secret } = folders();
    const runtime = new Runtime({ env: {}, allowRoots: [outside] });
    expect(await render(dir, `{% include "${secret}" %}`, runtime)).toBe('TOP-SECRET');
  });

  it('resolve names against the rendering hatchery: no cache shared between hatcheries', async () => {
    const a = tempDir();
    const b = tempDir();
    writeFileSync(path.join(a, 'part.njk'), 'A-part');
    writeFileSync(path.join(b, 'part.njk'), 'B-part');
    const runtime = new Runtime({ env: {} });
    expect(await render(a, '{% include "part.njk" %}', runtime)).toBe('A-part');
    expect(await render(b, '{% include "part.njk" %}', runtime)).toBe('B-part');
    const err = await refusal(b, `{% include "${path.join(a, 'part.njk')}" %}`);
    expect(err.code).toBe('PATH_DENIED');
  });

  it('stop a template that includes itself with a TEMPLATE error', async () => {
    const { dir } = folders();
    const err = await refusal(dir, '{% include "parts/loop.njk" %}');
    expect(err.code).toBe('TEMPLATE');
    expect(err.message).toMatch(/nest more than 50 deep/);
  });

  it('never read <cwd>/views (the nunjucks default loader) from the CLI', async () => {
    const cwd = tempDir();
    mkdirSync(path.join(cwd, 'views'));
    writeFileSync(path.join(cwd, 'views', 'secret.njk'), 'VIEWS-SECRET');
    const file = writeHatchery(tempDir(), 'views.json', hatch([echo('Show', '{% include "secret.njk" %}')]));
    const res = await runCli(['run', file, '--input', 'x'], { cwd });
    const r = { code: res.code, out: res.stdout + res.stderr };
    expect(r.out).not.toContain('VIEWS-SECRET');
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/template not found: secret\.njk/);
  });
});
