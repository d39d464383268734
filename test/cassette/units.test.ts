/** The pure parts of cassettes and test files: canonical requests, keys, diffs, JSON paths. */
import { describe, expect, it } from 'vitest';
import { canonicalJson, redactDeep, requestKey } from '../../src/journal/canonical.js';
import { lineDiff } from '../../src/runtime/cassette/diff.js';
import { jsonPath } from '../../src/runtime/testing/expect.js';

describe('cassette keys', () => {
  it('do not depend on the order of keys nor on undefined fields', () => {
    const a = { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: undefined };
    const b = { messages: [{ content: 'x', role: 'user' }], model: 'm' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(requestKey(a)).toBe(requestKey(b));
    expect(requestKey(a)).not.toBe(requestKey({ ...b, model: 'n' }));
  });

  it('are computed on redacted requests, so a secret never changes them', () => {
    const req = (key: string) =>
      redactDeep({ messages: [{ content: `use ${key}` }], headers: { Authorization: `Bearer ${key}` } }, [
        key,
      ]);
    expect(req('sk-first-secret-1')).toEqual({
      messages: [{ content: 'use [redacted]' }],
      headers: { Authorization: '[redacted]' },
    });
    expect(requestKey(req('sk-first-secret-1'))).toBe(requestKey(req('sk-second-secret-2')));
  });
});

describe('lineDiff', () => {
  it('shows recorded lines as -, this run as +, with one line of context and ... between changes', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].join('\n');
    const after = ['a', 'B', 'c', 'd', 'e', 'F', 'g'].join('\n');
    expect(lineDiff(before, after)).toBe(
      ['  a', '- b', '+ B', '  c', '  ...', '  e', '- f', '+ F', '  g'].join('\n'),
    );
  });

  it('cuts a long diff', () => {
    const before = Array.from({ length: 60 }, (_, i) => `line ${i}`).join('\n');
    const after = Array.from({ length: 60 }, (_, i) => `LINE ${i}`).join('\n');
    const d = lineDiff(before, after).split('\n');
    expect(d).toHaveLength(25);
    expect(d.at(-1)).toBe('  ... (96 more lines)');
  });
});

describe('jsonPath', () => {
  const doc = { items: [{ title: 'a' }, { 'odd key': 2 }], n: null };
  it('reads keys, indexes and quoted keys, with or without $', () => {
    expect(jsonPath(doc, '$.items[0].title')).toEqual({ found: true, value: 'a' });
    expect(jsonPath(doc, 'items[1]["odd key"]')).toEqual({ found: true, value: 2 });
    expect(jsonPath(doc, '$')).toEqual({ found: true, value: doc });
    expect(jsonPath(doc, '$.n')).toEqual({ found: true, value: null });
  });
  it('says where a path stops', () => {
    expect(jsonPath(doc, '$.items[5].title')).toEqual({ found: false, why: '$.items has no item 5' });
    expect(jsonPath(doc, '$.items[0].name')).toEqual({ found: false, why: '$.items[0] has no key "name"' });
    expect(jsonPath(doc, '$..x')).toEqual({ found: false, why: 'cannot read the path at "..x"' });
  });
});
