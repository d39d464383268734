/**
 * The format of test files (`*.test.yaml`, `*.test.json`): which hatchery to run, and cases with an
 * input, variables, a cassette and expectations on the output, the nodes taken and the tokens used.
 */
import { z } from 'zod';
import { fileObject } from './object.js';

/** One JSON path check: the value at `path` of the output (parsed as JSON) equals `equals`. */
const jsonCheck = fileObject({
  path: z.string().min(1, 'a JSON path such as "$.items[0].title"'),
  equals: z.unknown(),
});

/** Usable as a JavaScript regular expression; the message names the syntax error. */
const regexSource = z.string().superRefine((src, ctx) => {
  try {
    new RegExp(src);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

/** A JSON Schema the output must match; checked with zod's JSON Schema conversion, as output_schema is. */
const jsonSchema = z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
  try {
    z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a usable JSON Schema: ${(err as Error).message}` });
  }
});

/** What a case expects; every given check must hold. */
export const expectSchema = fileObject({
  /** The whole output, exactly (one trailing newline ignored). */
  equals: z.string().optional(),
  /** Text (or each text of a list) the output contains. */
  contains: z.union([z.string(), z.array(z.string())]).optional(),
  /** Text the output must not contain. */
  not_contains: z.union([z.string(), z.array(z.string())]).optional(),
  /** A regular expression the output matches. */
  regex: regexSource.optional(),
  /** Values inside the output parsed as JSON. */
  json: z.array(jsonCheck).optional(),
  /** A JSON Schema the output parsed as JSON matches. */
  schema: jsonSchema.optional(),
  /** The names of the nodes the top-level run executed, in order. */
  nodes: z.array(z.string()).optional(),
  /** Most tokens (input + output, nested runs included) the run may use. */
  max_tokens: z.number().int().nonnegative().optional(),
  /** The run must fail with an error whose message contains this text. */
  error: z.string().optional(),
});

/** One case: a run of the hatchery and what it must give. */
export const caseSchema = fileObject({
  name: z.string().min(1, 'a case needs a name'),
  /** `{{ ctx.input }}` of the run (run --input). */
  input: z.string().optional(),
  /** Values of declared inputs (run --set NAME=VALUE). */
  vars: z.record(z.string(), z.string()).optional(),
  /** The cassette that answers the run's calls, relative to the test file; default the file's. */
  cassette: z.string().optional(),
  expect: expectSchema,
});

/** A test file. */
export const testFileSchema = fileObject({
  /** The hatchery under test, relative to the test file. */
  hatchery: z.string().min(1, 'the path of the hatchery under test, relative to this file'),
  /** Default cassette of the cases, relative to the test file. */
  cassette: z.string().optional(),
  cases: z.array(caseSchema).min(1, 'a test file needs at least one case'),
});

/** A validated test file. */
export type TestFile = z.infer<typeof testFileSchema>;
/** A validated case. */
export type TestCase = z.infer<typeof caseSchema>;
/** A validated expectation block. */
export type Expectations = z.infer<typeof expectSchema>;
