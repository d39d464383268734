import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { loadHatchery } from '../../src/loader/load.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, echoNode, hatch, load, REPO_ROOT, tempDir } from '../helpers.js';

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
        { name: 'First', ...echoNode('<b>{{ ctx.input | upper }}</b> & co'), next: 'Second' },
        { name: 'Second', ...echoNode('{{ out.First }} | {{ ctx.missing | default("dflt") }}') },
      ]),
      { input: 'hi' },
    );
    expect(out).toBe('<b>HI</b> & co | dflt');
  });

  it('names the node, the field and the variable when a variable is undefined', async () => {
    // ctx.who is saved on one path only (a load-time warning); the run takes the other one.
    const err = await runError(
      hatch([
        echo('Start', 'x', { next: ['Saver', 'Greeter'] }),
        echo('Saver', 'you', { save_output: 'who', next: 'Greeter' }),
        { name: 'Greeter', ...echoNode('Hello\n  {{ ctx.who }}!') },
      ]),
    );
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
        { name: 'Show', ...echoNode('[{{ out.Model }}]') },
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
      const err = await runError(hatch([{ name: 'Evil', ...echoNode(`{{ ${expr} }}`) }]));
      expect(err.code).toBe('TEMPLATE');
      expect(err.message).toMatch(/"(constructor|__proto__)" cannot be accessed in templates/);
      expect(err.context).toMatchObject({ node: 'Evil', field: 'tool_args/text' });
    }
  });

  it('prints objects and arrays as JSON', async () => {
    const out = await runText(hatch([echoNode('{{ [1, {"a": "b"}] }}')]));
    expect(out).toBe('[1,{"a":"b"}]');
  });
});

describe('fread and files', () => {
  it('reads files below the hatchery folder, as fread() and ctx.fread()', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'docs'));
    writeFileSync(path.join(dir, 'docs', 'a.txt'), 'alpha');
    const out = await runText(
      hatch([echoNode('{{ fread("docs/a.txt") }}-{{ ctx.fread("docs/" + ctx.input) }}')]),
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
      const err = await runError(hatch([{ name: 'Reader', ...echoNode(`{{ fread("${p}") }}`) }]), { dir });
      expect(err.code).toBe('PATH_DENIED');
      expect(err.message).toContain(`path "${p}"`);
      expect(err.message).toContain('--allow-root');
      expect(err.context.node).toBe('Reader');
    }
  });

  it('allows extra roots given to the runtime', async () => {
    const outside = tempDir();
    writeFileSync(path.join(outside, 'shared.txt'), 'shared');
    const out = await runText(hatch([echoNode(`{{ fread("${path.join(outside, 'shared.txt')}") }}`)]), {
      allowRoots: [outside],
    });
    expect(out).toBe('shared');
  });

  it('loads files entries into ctx for each run and names a missing one', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'style.md'), 'be brief');
    expect(
      await runText(hatch([echoNode('{{ ctx.style }}')], { files: { style: 'style.md' } }), { dir }),
    ).toBe('be brief');
    const err = await runError(hatch([echoNode('x')], { files: { style: 'nope.md' } }), { dir });
    expect(err.code).toBe('FILE_IO');
    expect(err.toString()).toContain('files/style: cannot read "nope.md": no such file');
    const denied = await runError(hatch([echoNode('x')], { files: { pw: '../../../../etc/passwd' } }), {
      dir,
    });
    expect(denied.code).toBe('PATH_DENIED');
  });
});

describe('templates: what the sandbox keeps working', () => {
  it('loops, loop variables, dict iteration, macros with caller, cycler, joiner and range', async () => {
    const out = await runText(
      hatch([
        echoNode(
          [
            '{% for x in ["a", "b"] %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}',
            '{% for k, v in {"p": 1, "q": 2} %}{{ k }}={{ v }};{% endfor %}',
            '{% macro box(title, sep="|") %}[{{ title }}{{ sep }}{{ caller() }}]{% endmacro %}',
            '{% call box("t", sep=":") %}body {{ ctx.input }}{% endcall %}',
            '{% set c = cycler("odd", "even") %}{% for i in range(1, 4) %}{{ c.next() }}{% endfor %}/{{ c.current }}',
            '{% set j = joiner(" + ") %}{% for i in range(3) %}{{ j() }}{{ i }}{% endfor %}',
            '{{ range(10, 0, -3) | join(",") }}',
          ].join('\n'),
        ),
      ]),
      { input: 'hi' },
    );
    expect(out).toBe(
      ['1a,2b', 'p=1;q=2;', '', '[t:body hi]', 'oddevenodd/odd', '0 + 1 + 2', '10,7,4,1'].join('\n'),
    );
  });

  it('filters that take attribute names, on data', async () => {
    const people =
      '[{"n": "bo", "age": 3, "team": {"id": "x"} }, {"n": "Al", "age": 1, "team": {"id": "y"} }, {"n": "cy", "age": 2, "team": {"id": "x"} }]';
    const out = await runText(
      hatch([
        echoNode(
          [
            `{% set ps = ${people} %}`,
            '{{ ps | sort(attribute="age") | join(",", "n") }}',
            '{{ ps | sort(false, false, "n") | join(",", "n") }}',
            '{% for id, group in ps | groupby("team.id") %}{{ id }}:{{ group | length }} {% endfor %}',
            '{{ ps | sum("age") }}',
            '{{ ps | selectattr("team") | length }}/{{ ps | rejectattr("age") | length }}',
            '{{ {"b": 2, "a": 1} | dictsort | first | join("=") }}',
            '{{ ps | first | dump }}',
          ].join('\n'),
        ),
      ]),
    );
    expect(out).toBe(
      [
        '',
        'Al,cy,bo',
        'Al,bo,cy',
        'x:2 y:1 ',
        '6',
        '3/0',
        'a=1',
        '{"n":"bo","age":3,"team":{"id":"x"}}',
      ].join('\n'),
    );
  });

  it('allow-listed string, array and number methods', async () => {
    const out = await runText(
      hatch([
        echoNode(
          '{{ ctx.input.split(",") | length }} {{ " x ".trim() }}{{ ctx.input.upper() }} {{ ctx.input.replace(r/,/g, ";") }} {{ ctx.input.split(",").join("|") }} {{ (2.345).toFixed(1) }} {{ ctx.input.startsWith("a") }} {{ ctx.input[0] }}{{ ctx.input.length }}',
        ),
      ]),
      { input: 'a,b,c' },
    );
    expect(out).toBe('3 xA,B,C a;b;c a|b|c 2.3 true a5');
  });

  it('child scopes (parallel and map branches) read their parent ctx, out and fread', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'note.txt'), 'noted');
    const out = await runText(
      hatch([
        { name: 'First', ...echoNode('first:{{ ctx.input }}'), next: 'Fan' },
        { name: 'Fan', type: 'parallel', branches: ['A'], next: 'Each' },
        {
          name: 'A',
          ...echoNode('{{ ctx.input }}|{{ out.First }}|{{ ctx.fread("note.txt") }}|{{ fread("note.txt") }}'),
        },
        { name: 'Each', type: 'map', items: '["x", "y"]', node: 'Item', next: 'Show' },
        { name: 'Item', ...echoNode('{{ ctx.index }}{{ ctx.item }}-{{ ctx.input }}-{{ out.A }}') },
        { name: 'Show', ...echoNode('{{ out.Each | join(" ") }}') },
      ]),
      { dir, input: 'in' },
    );
    expect(out).toBe('0x-in-in|first:in|noted|noted 1y-in-in|first:in|noted|noted');
  });

  it('never invokes a getter or a method of a value handed in by a library caller', async () => {
    let touched = false;
    const tricky = {
      plain: 'ok',
      get secret() {
        touched = true;
        return 'leaked';
      },
    };
    const h = load(
      hatch([{ name: 'Show', ...echoNode('{{ ctx.obj.plain }}') }], { inputs: { obj: 'an object' } }),
    );
    const runtime = new Runtime({ env: {} });
    const vars = { obj: tricky } as unknown as Record<string, string>;
    expect((await runtime.run(h, { vars })).output).toBe('ok');
    for (const expr of ['ctx.obj.secret', 'ctx.when.getTime()']) {
      const bad = load(
        hatch([{ name: 'Show', ...echoNode(`{{ ${expr} }}`) }], {
          inputs: { obj: 'an object', when: 'a date' },
        }),
      );
      const err = await runtime.run(bad, { vars: { ...vars, when: new Date() } as never }).catch((e) => e);
      expect(err).toBeInstanceOf(HatcheryError);
      expect(err.code).toBe('TEMPLATE');
      expect(err.message).toMatch(/cannot be accessed in templates/);
    }
    expect(touched).toBe(false);
  });

  it('the unique_lines example still counts lines with .split()', async () => {
    const h = await loadHatchery(path.join(REPO_ROOT, 'hatchery', 'unique-lines.json'));
    const out = (await new Runtime({ env: {} }).run(h, { input: 'b\na\nb' })).output;
    expect(out).toBe('a\nb\n\n(2 unique lines)');
  });
});
