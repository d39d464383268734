import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/journal/canonical.js';

/**
 * Journal and cassette keys hash canonicalJson's text: it must stay the text recorded keys were made
 * from (keys sorted, integer keys first, what JSON leaves out left out), or recorded keys change.
 */
describe('canonical JSON', () => {
  // A hole at index 1, built without a sparse literal (the linter refuses those).
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const cases: [unknown, string][] = [
    [undefined, 'null'],
    [null, 'null'],
    ['text "quoted" \n é', '"text \\"quoted\\" \\n é"'],
    [-0, '0'],
    [1.5e300, '1.5e+300'],
    [Number.NaN, 'null'],
    [Number.POSITIVE_INFINITY, 'null'],
    [true, 'true'],
    [[], '[]'],
    [{}, '{}'],
    [[undefined, null, () => 1, Symbol('s'), 'x', sparse], '[null,null,null,null,"x",[1,null,3]]'],
    [
      { b: 1, a: { d: [3, { z: undefined, y: 'y' }], c: null }, f: () => 1, s: Symbol('t'), u: undefined },
      '{"a":{"c":null,"d":[3,{"y":"y"}]},"b":1}',
    ],
    [{ é: 1, 'a b': 2, '"q"': 3, 10: 'ten', 2: 'two' }, '{"2":"two","10":"ten","\\"q\\"":3,"a b":2,"é":1}'],
    [new Date(0), '{}'],
    [Object.assign(Object.create({ inherited: 1 }), { own: 2 }), '{"own":2}'],
  ];

  it('gives the text recorded keys were made from, for every kind of value', () => {
    for (const [v, text] of cases) expect(canonicalJson(v), text).toBe(text);
  });

  it('indents the same text on request (cassette miss diffs)', () => {
    for (const [v, text] of cases)
      expect(canonicalJson(v, 2)).toBe(JSON.stringify(JSON.parse(text), null, 2));
    expect(canonicalJson({ b: [1, { y: 2 }], 10: 'ten' }, 2)).toBe(
      '{\n  "10": "ten",\n  "b": [\n    1,\n    {\n      "y": 2\n    }\n  ]\n}',
    );
  });

  it('fails on values JSON cannot hold, as before', () => {
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(RangeError);
  });
});
