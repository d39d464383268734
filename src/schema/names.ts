/**
 * Names of the file format that need no zod: what start-up reads (the fast check, the graph) without
 * building a schema. common.ts and hatchery.ts re-export them.
 */

/** The reserved `next` target that ends a run. */
export const END = 'END';

/** Spellings of top-level fields used by the original Hatchery. */
export const hatcheryAliases = { description: 'desc', input: 'inputs' } as const;

const PROTOTYPE_REASON =
  'is reserved: it names part of every JavaScript object (its prototype), and a variable with this name could change how ctx behaves';

/** Names `save_output` cannot take: the vocabulary of JavaScript prototypes, and the template function. */
export const RESERVED_SAVE_NAMES: ReadonlyMap<string, string> = new Map([
  ...[...Object.getOwnPropertyNames(Object.prototype), 'prototype'].map(
    (n) => [n, PROTOTYPE_REASON] as const,
  ),
  ['fread', 'is reserved: it is the template function {{ fread(path) }}'],
]);

/** Names a declared input or `files` entry cannot take (they become ctx keys); each with the reason. */
export const RESERVED_VAR_NAMES: ReadonlyMap<string, string> = new Map([
  ...RESERVED_SAVE_NAMES,
  ['input', "is the run's own input ({{ ctx.input }})"],
]);
