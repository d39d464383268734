import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { planOf } from '../../src/engine/templates/simple.js';
import { Template, type TemplateVars } from '../../src/engine/templates/templates.js';

/**
 * Plain prompts (text and `{{ a.b }}` lookups) skip nunjucks. A comment makes nunjucks render the
 * same template (it prints nothing), so each case compares the two ways: same text, or same error.
 */
function once(make: () => Template, vars: TemplateVars): string {
  try {
    return `ok:${make().render(vars)}`;
  } catch (err) {
    expect(err).toBeInstanceOf(HatcheryError);
    const e = err as HatcheryError;
    return `error:${e.code}:${e.message}:${JSON.stringify(e.context)}`;
  }
}

/** The outcome of a render; rendered twice, as the first render of a template prepares its plan. */
function outcome(source: string, vars: TemplateVars): string {
  let t: Template | undefined;
  const make = () => {
    t ??= new Template(source, { node: 'N', field: 'usr_prompt' });
    return t;
  };
  const first = once(make, vars);
  expect(once(make, vars), source).toBe(first);
  return first;
}

function scopeVars(): TemplateVars {
  const fread = (p: string) => `read ${p}`;
  const base = Object.create(null, { fread: { value: fread, enumerable: false } });
  const ctx = Object.create(base) as Record<string, unknown>;
  Object.assign(ctx, {
    input: 'hello',
    n: 42,
    zero: 0,
    neg: -0,
    yes: true,
    no: false,
    empty: '',
    nothing: null,
    list: ['a', { deep: 'b' }, 3],
    obj: { 'a b': 'spaced', inner: { x: 'y' }, fn: () => 'no' },
  });
  Object.defineProperty(ctx, 'getter', { get: () => 'secret', enumerable: true });
  const out = Object.create(null) as Record<string, unknown>;
  out.First = 'first output';
  out.Value = { score: 7, tags: ['t1'] };
  // A child scope (a branch): reads its parent's variables through the prototype chain.
  const childCtx = Object.create(ctx) as Record<string, unknown>;
  childCtx.item = 'mine';
  const childOut = Object.create(out) as Record<string, unknown>;
  return { ctx: childCtx, out: childOut, fread, loop: { index: 1 } };
}

const PLAIN = [
  '',
  'no tags at all',
  '{{ ctx.input }}',
  '{{ctx.input}}',
  'Continue from {{ out.First }}.',
  '{{ ctx.input }} and {{ ctx.n }} and {{ ctx.zero }} / {{ ctx.neg }} {{ ctx.yes }} {{ ctx.no }}[{{ ctx.empty }}]',
  '{{ ctx.item }} {{ out.First }} {{ ctx.list[0] }} {{ ctx.list[1].deep }} {{ ctx.list[2] }}',
  '{{ ctx.obj["a b"] }} {{ ctx.obj[\'a b\'] }} {{ ctx.obj.inner.x }}',
  '{{ out.Value.score }} {{ out.Value.tags[0] }} {{ ctx.input.length }} {{ ctx.input[1] }}',
  '{{ loop.index }}',
  'multi\nline {{ ctx.input }}\r\n\t{{ out.First }} } }} %} stray',
  '{{\n  ctx.input\n}}',
  // Values nunjucks prints or refuses itself: the fast path hands them over.
  '{{ out.Value }}',
  '{{ ctx.list }}',
  '{{ ctx.missing }}',
  '{{ ctx.nothing }}',
  '{{ nowhere.at.all }}',
  '{{ ctx.input.upper }}',
  '{{ ctx.obj.fn }}',
  '{{ ctx.getter }}',
  '{{ ctx.fread }}',
  '{{ fread }}',
  '{{ range }}',
  '{{ ctx.constructor }}',
  '{{ ctx.__proto__ }}',
  '{{ ctx["__proto__"] }}',
  '{{ ctx.input.constructor }}',
  '{{ out.toString }}',
  '{{ ctx.list.join }}',
  '{{ ctx.list[9] }}',
  // One lookup with text around it, each kind of value.
  'Continue from {{ out.First }}',
  '{{ out.First }} then',
  'n={{ ctx.n }}, yes={{ ctx.yes }}, no={{ ctx.no }}',
  'a {{ ctx.zero }} b',
  '[{{ ctx.empty }}]',
  'x {{ ctx.item }} y',
  'x {{ out.Value }} y',
  'x {{ ctx.nothing }} y',
  'x {{ ctx.missing }} y',
  'x {{ ctx.getter }} y',
  'x {{ ctx.fread }} y',
  'x {{ ctx.constructor }} y',
  'x {{ out.toString }} y',
  'x {{ ctx["__proto__"] }} y',
];

const NOT_PLAIN = [
  '{{ ctx.input | upper }}',
  '{{- ctx.input }}',
  '{{ ctx.input -}} x',
  '{% if ctx.yes %}y{% endif %}',
  '{# note #}{{ ctx.input }}',
  '{{ true }}',
  '{{ none }}',
  '{{ ctx.true }}',
  '{{ ctx.input + 1 }}',
  '{{ ctx . input }}',
  '{{ ctx.list[-1] }}',
  '{{ ctx.obj["a\\"b"] }}',
  '{{ ctx.input }',
  '{{ fread("x") }}',
];

describe('plain templates skip nunjucks and render the same', () => {
  it('recognises text and lookups only', () => {
    for (const t of PLAIN) expect(planOf(t), t).not.toBeNull();
    for (const t of NOT_PLAIN) expect(planOf(t), t).toBeNull();
    // A stray `#}` after a tag is a nunjucks syntax error, reported when the template is compiled.
    expect(planOf('{{ ctx.input }} #} more')).toBeNull();
  });

  it('gives the text or the error nunjucks gives, for every kind of value', () => {
    for (const t of [...PLAIN, ...NOT_PLAIN]) {
      const vars = scopeVars();
      expect(outcome(t, vars), t).toBe(outcome(`${t}{# through nunjucks #}`, vars));
    }
    // Spot checks of what that is.
    expect(outcome('{{ ctx.item }}/{{ out.First }}/{{ ctx.n }}', scopeVars())).toBe(
      'ok:mine/first output/42',
    );
    expect(outcome('{{ out.Value }}', scopeVars())).toBe('ok:{"score":7,"tags":["t1"]}');
    expect(outcome('{{ ctx.missing }}', scopeVars())).toMatch(/^error:UNDEFINED_VARIABLE:.*"node":"N"/);
    expect(outcome('{{ ctx.constructor }}', scopeVars())).toMatch(/^error:TEMPLATE:.*cannot be accessed/);
  });

  it('reads fields named like those of Object.prototype as nunjucks does, even on a polluted prototype', () => {
    const vars = scopeVars();
    // Nodes may be named toString or constructor: their outputs are own data of `out`.
    const set = (o: object, key: string | number, value: unknown) => {
      (o as Record<string | number, unknown>)[key] = value;
    };
    set(Object.getPrototypeOf(vars.out), 'toString', 'a node named toString');
    set(vars.out as object, 'constructor', 'a node named constructor');
    set(vars.ctx as object, 0, 'zero');
    const cases = [
      '{{ out.toString }}|{{ out.constructor }}',
      '{{ out.hasOwnProperty }}',
      '{{ ctx[0] }}',
      '{{ out["toString"] }}',
      '{{ out.polluted }}',
      '{{ ctx.polluted }}',
    ];
    // Variables given as plain objects: their chain ends at Object.prototype.
    const plain: TemplateVars = { ctx: { input: 'hello' }, out: { First: 'first' }, fread: vars.fread };
    const compare = () => {
      for (const t of cases) {
        for (const v of [vars, plain])
          expect(outcome(t, v), t).toBe(outcome(`${t}{# through nunjucks #}`, v));
      }
    };
    compare();
    expect(outcome(cases[0]!, vars)).toBe('ok:a node named toString|a node named constructor');
    const proto = Object.prototype as unknown as Record<string, unknown>;
    proto.polluted = 'from the prototype';
    try {
      compare();
      expect(outcome('{{ out.polluted }}', vars)).toMatch(/^error:TEMPLATE:.*cannot be accessed/);
      expect(outcome('{{ ctx.polluted }}', plain)).toMatch(/^error:TEMPLATE:.*cannot be accessed/);
    } finally {
      delete proto.polluted;
    }
  });

  it('reads the values of each render, never those of an earlier one', () => {
    const t = new Template('{{ ctx.input }}-{{ out.First }}', { node: 'N' });
    const a = scopeVars();
    const b = scopeVars();
    (b.ctx as Record<string, unknown>).input = 'other';
    (b.out as Record<string, unknown>).First = 'second';
    expect(t.render(a)).toBe('hello-first output');
    expect(t.render(b)).toBe('other-second');
    expect(t.render(a)).toBe('hello-first output');
  });
});
