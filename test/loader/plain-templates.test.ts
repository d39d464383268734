import nunjucks from 'nunjucks';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { planOf, simpleTags } from '../../src/engine/templates/simple.js';
import { Template } from '../../src/engine/templates/templates.js';
import { templateRefs } from '../../src/loader/analysis/template-refs.js';
import { loadHatcheryObject } from '../../src/loader/load.js';
import { seededRandom } from '../helpers.js';

/**
 * Plain templates (text and `{{ a.b[0] }}` lookups, simple.ts' plan) are not parsed by nunjucks at load:
 * that is only sound if every such template parses, and if the variables the analysis reads from
 * their text are the ones the parse tree gives. Both are checked on seeded random templates built
 * from the characters that matter to nunjucks' lexer, and on hand-picked ones.
 */
const parse = (source: string): unknown =>
  (nunjucks as unknown as { parser: { parse(s: string): unknown } }).parser.parse(source);

/** Seeded, so a failure is reproducible. */
const rng = seededRandom;

const PIECES = [
  'text ',
  '\n',
  '\r\n',
  '\r',
  '\t',
  'é',
  '😀',
  '{',
  '}',
  '}}',
  '%}',
  '#',
  '{{ ctx.topic }}',
  '{{ctx.a}}',
  '{{\n  out["My node"].x[0] }}',
  "{{ out['x'][2] }}",
  '{{ topic }}',
  '{{ branches }}',
  '{{ loop }}',
  '{{ ctx }}',
  '{{ ctx[0] }}',
  '{{ x.true }}',
  '{{ none }}',
  '{{ a.b }}',
  '{{ ctx["a}}b"] }}',
  '{{ ctx["{{"] }}',
  '{{ ctx . a }}',
  '{{ 1 }}',
  '{{- ctx.a }}',
  '{{ ctx.a | upper }}',
  '{{ ctx.tone | default("warm") }}',
  '{{ out.Plan.sections|dump }}',
  '{{ ctx.x | d }}',
  '{{ topic | default("a|default") | upper }}',
  "{{ ctx.a | replace('x', 'y') | trim }}",
  '{{ ctx.a | join(", ") }}',
  '{{ ctx.a | truncate(10, 3) }}',
  '{{ ctx.a | in }}',
  '{{ ctx.a | default(ctx.b) }}',
  '{{ ctx.a | upper() }}',
  '{{ ctx.a | default("}}") }}',
  '{{ ctx.index + 1 }}',
  '{{ loop.index0*2 }}',
  '{{ topic % 3 }}',
  '{{ ctx.a + 1 | default("x") }}',
  '{{ ctx.a - -1 }}',
  '| default',
  '(',
  ')',
  ',',
  '{% if ctx.a %}',
  '{% if ctx.tone %}',
  '{% if topic | default("x") %}',
  '{%if out.A%}',
  '{% if ctx %}',
  '{% else %}',
  '{% endif %}',
  '{% endif %}',
  '{% elif ctx.b %}',
  '{%- if ctx.a %}',
  '{% for x in ctx.list %}',
  '{# c #}',
  '{{',
  '"',
  "'",
  '[',
  ']',
  '.',
];

const CONDS = ['ctx.a', 'ctx.tone', 'out.A.b', 'topic', 'ctx', 'ctx.a | default("x")', 'loop', 'branches'];

function randomTemplate(next: () => number): string {
  const n = 1 + Math.floor(next() * 8);
  let s = '';
  for (let i = 0; i < n; i++) {
    s += PIECES[Math.floor(next() * PIECES.length)];
    // Balanced blocks too, so that if/else/endif nesting is reached often.
    if (next() < 0.15) {
      const cond = CONDS[Math.floor(next() * CONDS.length)];
      const inner = randomTemplate(next);
      s +=
        next() < 0.5
          ? `{% if ${cond} %}${inner}{% endif %}`
          : `{% if ${cond} %}${inner}{% else %}x{{ ctx.tone }}{% endif %}`;
    }
  }
  return s;
}

describe('plain templates skip the load-time parse', () => {
  it('every template of simple tags parses and compiles in nunjucks, with the same variables', () => {
    const next = rng(15);
    const extras = new Set(['branches']);
    let plain = 0;
    let filtered = 0;
    let blocks = 0;
    for (let i = 0; i < 12000; i++) {
      const source = randomTemplate(next);
      if (simpleTags(source) === null) {
        expect(planOf(source), source).toBeNull();
        continue;
      }
      plain++;
      if (source.includes('|')) filtered++;
      if (source.includes('{%')) blocks++;
      const tree = parse(source);
      expect(() => new nunjucks.Template(source, new nunjucks.Environment(), 'x', true)).not.toThrow();
      expect(templateRefs(source, extras), source).toEqual(templateRefs(source, extras, tree));
    }
    // The generator must reach the plain path often enough for the comparison to mean something.
    expect(plain).toBeGreaterThan(300);
    expect(filtered).toBeGreaterThan(100);
    expect(blocks).toBeGreaterThan(100);
  });

  it('reads the same variables and positions as the parse tree on hand-written prompts', () => {
    for (const source of [
      'Write about {{ ctx.topic }}.',
      'line one\n  and {{  out["My node"].y[0] }} then {{topic}}\n{{ ctx.x }}',
      '\n\n{{\n ctx.a }}',
      'héllo 😀 {{ ctx.b }}',
      'a\r\nb {{ ctx.c }}',
      '{{ ctx }}{{ out }}{{ fread }}{{ x.y }}',
      'You write in a {{ ctx.tone | default("warm") }} tone about {{ out.Plan.sections | dump }}.',
      '{{ ctx.a | upper | d("x") }} {{ topic|default }}',
      '{% if ctx.tone %}Keep the {{ ctx.tone }} tone. {% endif %}Polish:\n\n{{ out.Titler }}',
      '{% if ctx.a %}{% if out.B %}{{ ctx.a }}{{ out.B }}{% else %}{{ out.C }}{{ ctx.a }}{% endif %}{% endif %}{{ ctx.a }}',
    ]) {
      expect(simpleTags(source), source).not.toBeNull();
      expect(templateRefs(source), source).toEqual(templateRefs(source, new Set(), parse(source)));
    }
  });

  it('still reports a template syntax error at load, with node, field and position', () => {
    const res = loadHatcheryObject(
      {
        name: 'broken',
        desc: 'd',
        nodes: [{ name: 'A', usr_prompt: 'ok {{ ctx.input }} then {{ ctx.x | }}' }],
      },
      '',
    );
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.error.problems[0]?.path).toBe('nodes/0/usr_prompt');
    expect(res.error.problems[0]?.message).toMatch(/template syntax error at line 1/);
  });

  it('renders a plain template that was never parsed, and falls back to nunjucks for objects', () => {
    const t = new Template('{{ ctx.a }} and {{ ctx.o }}', { node: 'N', field: 'usr_prompt' });
    const vars = { ctx: { a: 'x', o: { k: 1 } }, out: {}, fread: () => '' };
    expect(t.render(vars)).toBe('x and {"k":1}');
    expect(() => t.render({ ctx: {}, out: {}, fread: () => '' })).toThrow(HatcheryError);
  });
});
