/**
 * withFields is the copy-with-changes used on per-call paths (requests of a tool loop, template
 * variables of a join) instead of a spread followed by properties: it must give what the spread gave.
 */
import { describe, expect, it } from 'vitest';
import { withFields } from '../../src/core/objects.js';

describe('withFields', () => {
  it('gives what `{ ...obj, ...fields }` gives: same keys in the same order, same values', () => {
    const signal = new AbortController().signal;
    const req = {
      model: 'm',
      system: 's',
      messages: [{ role: 'user', content: 'hi' }],
      signal,
      cache: false,
    };
    const tools = [{ name: 't' }];
    const copy = withFields(req, { messages: [], tools });
    expect(copy).toEqual({ ...req, messages: [], tools });
    expect(Object.keys(copy)).toEqual(Object.keys({ ...req, messages: [], tools }));
    expect(copy.signal).toBe(signal);
    expect(copy.tools).toBe(tools);
  });

  it('leaves the original unchanged and makes a new object each time', () => {
    const vars = { ctx: { a: 1 }, out: { N: 'x' } };
    const a = withFields(vars, { branches: [1] });
    const b = withFields(vars, { branches: [2] });
    expect(vars).toEqual({ ctx: { a: 1 }, out: { N: 'x' } });
    expect(a).not.toBe(b);
    expect(a.ctx).toBe(vars.ctx);
    expect([a.branches, b.branches]).toEqual([[1], [2]]);
  });

  it('copies own enumerable fields only, reading getters once, as a spread does', () => {
    let reads = 0;
    const proto = { inherited: 1 };
    const obj = Object.create(proto, {
      own: { value: 2, enumerable: true },
      hidden: { value: 3, enumerable: false },
      got: { get: () => ++reads, enumerable: true },
    }) as Record<string, unknown>;
    const copy = withFields(obj, { extra: 4 }) as Record<string, unknown>;
    expect(copy).toEqual({ own: 2, got: 1, extra: 4 });
    expect(Object.getOwnPropertyDescriptor(copy, 'got')?.value).toBe(1);
    expect(reads).toBe(1);
  });
});
