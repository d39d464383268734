import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssues, issuesText } from '../../src/schema/issues.js';
import { fileObject } from '../../src/schema/object.js';

/** The messages of validating `value` against `schema`, as `path: message` lines. */
function lines(schema: z.ZodType, value: unknown): string[] {
  const r = schema.safeParse(value);
  if (r.success) return [];
  return describeIssues(r.error.issues, value, schema).map(
    (m) => `${m.segs.join('/') || '(root)'}: ${m.message}`,
  );
}

describe('describeIssues: every zod issue kind as a sentence', () => {
  const schema = fileObject({
    title: z.string().min(2).max(5).describe('The title of the thing'),
    count: z.number().int().min(1).max(10).multipleOf(2).optional(),
    mode: z.enum(['fast', 'slow']).optional(),
    kind: z.literal('x').optional(),
    url: z.url().optional(),
    code: z
      .string()
      .regex(/^[A-Z]+$/)
      .optional(),
    tags: z.array(z.string()).max(2).optional(),
    next: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    env: z.record(z.string().regex(/^[A-Z]+$/), z.string()).optional(),
    flag: z.boolean().optional(),
  });

  it('types, limits, allowed values, formats, unions and record keys', () => {
    expect(
      lines(schema, {
        title: 'a',
        count: 11,
        mode: 'fats',
        kind: 'y',
        url: 'nope',
        code: 'abc',
        tags: ['a', 'b', 'c'],
        next: {},
        env: { lower: 'x' },
        flag: 'yes',
      }),
    ).toEqual([
      'title: must have at least 2 characters',
      'count: must be at most 10, not the number 11',
      'count: must be a multiple of 2, not the number 11',
      'mode: must be one of "fast", "slow", not the text "fats" (did you mean "fast"?)',
      'kind: must be "x", not the text "y"',
      'url: must be a URL such as "https://example.com/v1", not the text "nope"',
      'code: must match the pattern /^[A-Z]+$/, not the text "abc"',
      'tags: must have at most 2 entries',
      'next: must be a string or a list of strings, not an object',
      'env/lower: the key "lower" is not allowed: must match the pattern /^[A-Z]+$/, not the text "lower"',
      'flag: must be true or false, not the text "yes"',
    ]);
  });

  it('a missing required key is described; its typo is one problem, at the typo', () => {
    expect(lines(schema, {})).toEqual([
      'title: missing required key "title" (the title of the thing); add it (a string)',
    ]);
    expect(lines(schema, { titel: 'abc' })).toEqual([
      'titel: unknown key "titel": did you mean "title"? (title is required)',
    ]);
    expect(lines(schema, { title: 'abc', nxet: 'A' })).toEqual([
      'nxet: unknown key "nxet" (did you mean "next"?)',
    ]);
  });

  it('a schema given as JSON Schema (output_schema, test expectations, js: tools) reads the same', () => {
    const s = z.fromJSONSchema({
      type: 'object',
      properties: { title: { type: 'string' }, n: { type: 'integer', minimum: 0 } },
      required: ['title'],
    });
    expect(issuesText(s.safeParse({ n: -1 }).error!.issues, { n: -1 }, s)).toBe(
      'title: missing required key "title"; add it (a string); n: must be at least 0, not the number -1',
    );
  });
});
