import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

const echo = (text: string) => ({ type: 'tool', tool_name: 'echo', tool_args: { text } });

async function runText(def: unknown, opts: { input?: string; dir?: string; allowRoots?: string[] } = {}) {
  const h = load(def, opts.dir);
  const runtime = new Runtime({ allowRoots: opts.allowRoots, env: {} });
  return (await runtime.run(h, { input: opts.input })).output;
}

async function runError(def: unknown, opts: { input?: string; dir?: string } = {}): Promise<HatcheryError> {
  try {
    await runText(def, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(HatcheryError);
    return err as HatcheryError;
  }
  throw new Error('expected the run to fail');
}

describe('templates', () => {
  it('renders ctx, out and filters without escaping HTML', async () => {
    const out = await runText(
      hatch([
        { name: 'First', ...echo('<b>{{ ctx.input | upper }}</b> & co'), next: 'Second' },
        { name: 'Second', ...echo('{{ out.First }} | {{ ctx.missing | default("dflt") }}') },
      ]),
      { input: 'hi' },
    );
    expect(out).toBe('<b>HI</b> & co | dflt');
  });

  it('names the node, the field and the variable when a variable is undefined', async () => {
    const err = await runError(hatch([{ name: 'Greeter', ...echo('Hello\n  {{ ctx.who }}!') }]));
    expect(err.code).toBe('UNDEFINED_VARIABLE');
    expect(err.context).toMatchObject({ node: 'Greeter', field: 'tool_args/text', variable: 'ctx.who' });
    expect(err.toString()).toMatch(
      /node "Greeter": tool_args\/text: undefined variable `ctx\.who` \(line 2\)/,
    );
  });

  it('never evaluates template syntax that arrives in model output', async () => {
    const model = new ScriptedProvider(['{{ ctx.secret }} {% for x in range(3) %}boom{% endfor %}']);
    const h = load(
      hatch([
        { name: 'Model', usr_prompt: 'x', next: 'Show' },
        { name: 'Show', ...echo('[{{ out.Model }}]') },
      ]),
    );
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const res = await runtime.run(h, { vars: {} });
    expect(res.output).toBe('[{{ ctx.secret }} {% for x in range(3) %}boom{% endfor %}]');
  });

  it('cannot reach the Function constructor or prototypes', async () => {
    for (const expr of [
      'range.constructor',
      'ctx.__proto__',
      'fread.constructor',
      '"a".constructor',
      'range.constructor("return process")()',
      'ctx["constr" + "uctor"]',
    ]) {
      const err = await runError(hatch([{ name: 'Evil', ...echo(`{{ ${expr} }}`) }]));
      expect(err.code).toBe('TEMPLATE');
      expect(err.message).toMatch(/"(constructor|__proto__)" cannot be accessed in templates/);
      expect(err.context).toMatchObject({ node: 'Evil', field: 'tool_args/text' });
    }
  });

  it('prints objects and arrays as JSON', async () => {
    const out = await runText(hatch([echo('{{ [1, {"a": "b"}] }}')]));
    expect(out).toBe('[1,{"a":"b"}]');
  });
});

describe('fread and files', () => {
  it('reads files below the hatchery folder, as fread() and ctx.fread()', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'docs'));
    writeFileSync(path.join(dir, 'docs', 'a.txt'), 'alpha');
    const out = await runText(
      hatch([echo('{{ fread("docs/a.txt") }}-{{ ctx.fread("docs/" + ctx.input) }}')]),
      {
        dir,
        input: 'a.txt',
      },
    );
    expect(out).toBe('alpha-alpha');
  });

  it('refuses paths outside the allowed roots: .., absolute and symlinks', async () => {
    const outside = tempDir();
    writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    const dir = tempDir();
    symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'));
    const rel = path.relative(dir, path.join(outside, 'secret.txt'));
    for (const p of [rel, path.join(outside, 'secret.txt'), 'link.txt']) {
      const err = await runError(hatch([{ name: 'Reader', ...echo(`{{ fread("${p}") }}`) }]), { dir });
      expect(err.code).toBe('PATH_DENIED');
      expect(err.message).toContain(`path "${p}"`);
      expect(err.message).toContain('--allow-root');
      expect(err.context.node).toBe('Reader');
    }
  });

  it('allows extra roots given to the runtime', async () => {
    const outside = tempDir();
    writeFileSync(path.join(outside, 'shared.txt'), 'shared');
    const out = await runText(hatch([echo(`{{ fread("${path.join(outside, 'shared.txt')}") }}`)]), {
      allowRoots: [outside],
    });
    expect(out).toBe('shared');
  });

  it('loads files entries into ctx for each run and names a missing one', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'style.md'), 'be brief');
    expect(await runText(hatch([echo('{{ ctx.style }}')], { files: { style: 'style.md' } }), { dir })).toBe(
      'be brief',
    );
    const err = await runError(hatch([echo('x')], { files: { style: 'nope.md' } }), { dir });
    expect(err.code).toBe('FILE_IO');
    expect(err.toString()).toContain('files/style: cannot read "nope.md": no such file');
    const denied = await runError(hatch([echo('x')], { files: { pw: '../../../../etc/passwd' } }), { dir });
    expect(denied.code).toBe('PATH_DENIED');
  });
});
