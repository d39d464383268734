import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadHatcheryObject } from '../../src/loader/load.js';
import { isPlainJsonSchema, lazyOutputSchema } from '../../src/nodes/plain-schema.js';
import { seededRandom } from '../helpers.js';

/**
 * A plain output_schema gets its zod validator on first use instead of at load. That is only sound
 * if zod converts every schema called plain (else a broken schema would pass the load): checked on
 * seeded random schemas; and a schema that is not plain is still converted, and reported, at load.
 */
/** Seeded, so a failure is reproducible. */
const rng = seededRandom;

const VALUES: unknown[] = [
  'object',
  'array',
  'string',
  'integer',
  'null',
  'bogus',
  3,
  -1,
  0.5,
  true,
  null,
  [],
  ['a'],
  [1, 'x'],
  {},
];
const KEYS = [
  'type',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'enum',
  'minimum',
  'maxLength',
  'minItems',
  'description',
  'title',
];

function randomSchema(next: () => number, depth: number): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  const n = Math.floor(next() * 4);
  for (let i = 0; i < n; i++) {
    const key = KEYS[Math.floor(next() * KEYS.length)]!;
    const pick = next();
    if (depth < 3 && (key === 'items' || key === 'additionalProperties') && pick < 0.7)
      s[key] = randomSchema(next, depth + 1);
    else if (depth < 3 && key === 'properties' && pick < 0.8)
      s[key] = { a: randomSchema(next, depth + 1), 'b c': randomSchema(next, depth + 1) };
    else s[key] = VALUES[Math.floor(next() * VALUES.length)];
  }
  return s;
}

describe('plain output schemas', () => {
  it('zod converts every schema the check calls plain', () => {
    const next = rng(15);
    let plain = 0;
    for (let i = 0; i < 3000; i++) {
      const schema = randomSchema(next, 0);
      if (!isPlainJsonSchema(schema)) continue;
      plain++;
      expect(
        () => z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]),
        JSON.stringify(schema),
      ).not.toThrow();
    }
    expect(plain).toBeGreaterThan(300);
  });

  it('leaves refs, combinators, patterns and unknown keys to the load-time conversion', () => {
    for (const schema of [
      { $ref: '#/$defs/x' },
      { anyOf: [{ type: 'string' }] },
      { type: 'string', pattern: '^a' },
      { type: ['string', 'null'] },
      { not: { type: 'string' } },
      { type: 'object', properties: { a: { if: {} } } },
      { items: [{ type: 'string' }] },
    ])
      expect(isPlainJsonSchema(schema), JSON.stringify(schema)).toBe(false);
  });

  it('a lazy validator checks replies as the eager one does', () => {
    const json = {
      type: 'object',
      properties: { title: { type: 'string' }, n: { type: 'integer', minimum: 1 } },
      required: ['title'],
    };
    const lazy = lazyOutputSchema(json);
    const eager = z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]);
    for (const v of [{ title: 'x', n: 2 }, { n: 2 }, { title: 'x', n: 0 }, 'text'])
      expect(lazy.validator.safeParse(v).success).toBe(eager.safeParse(v).success);
    expect(lazy.validator).toBe(lazy.validator);
  });

  it('an output_schema zod cannot convert is still a load problem', () => {
    const res = loadHatcheryObject(
      {
        name: 'h',
        desc: 'd',
        nodes: [{ name: 'A', usr_prompt: 'x', output_schema: { not: { type: 'string' } } }],
      },
      '',
    );
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error.message).toMatch(/output_schema.*not a usable JSON Schema/s);
  });
});
