import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/journal/canonical.js';

/**
 * Journal and cassette keys hash canonicalJson's text, which is now written without a sorted copy:
 * it must stay the text the copying path (still used with an indent) gives, or recorded keys change.
 */
describe('canonical JSON', () => {
  // A hole at index 1, built without a sparse literal (the linter refuses those).
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const values: unknown[] = [
    undefined,
    null,
    'text "quoted" \n \u2028 é',
    0,
    -0,
    1.5e300,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    true,
    [],
    {},
    [undefined, null, () => 1, Symbol('s'), 'x', sparse],
    { b: 1, a: { d: [3, { z: undefined, y: 'y' }], c: null }, f: () => 1, s: Symbol('t'), u: undefined },
    { é: 1, 'a b': 2, '"q"': 3, 10: 'ten', 2: 'two' },
    new Date(0),
    Object.assign(Object.create({ inherited: 1 }), { own: 2 }),
    {
      vendor: 'openai',
      model: 'gpt-5.4-mini',
      system: 'You are a helpful assistant.',
      messages: [{ role: 'user', content: 'Continue from ok' }],
      temperature: undefined,
      tools: [{ name: 't', description: 'd', inputSchema: { type: 'object', properties: {} } }],
    },
  ];

  it('gives the same text as the sorted copy did, for every kind of value', () => {
    for (const v of values) expect(canonicalJson(v), JSON.stringify(v) ?? typeof v).toBe(canonicalJson(v, 0));
    expect(canonicalJson({ b: [1, undefined], a: 'x' })).toBe('{"a":"x","b":[1,null]}');
  });

  it('fails on values JSON cannot hold, as before', () => {
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(RangeError);
  });
});
