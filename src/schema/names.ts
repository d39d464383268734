/**
 * Names of the file format that need no zod: what the graph and the engine read without building a
 * schema.
 */

/** The reserved `next` target that ends a run. */
export const END = 'END';

/** Node names: used in `next`, `out.<name>` and routing, so no spaces; `END` is reserved. */
export const NODE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** An identifier: `save_output`, declared inputs and `files` names (they become ctx keys). */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `root.name` as a user writes it in a template: `out.x`, or `out["x-y"]` for a name that is no identifier. */
export function lookupExpr(root: string, name: string): string {
  return IDENTIFIER.test(name) ? `${root}.${name}` : `${root}[${JSON.stringify(name)}]`;
}
/** A valid MCP tool name: letters, digits, _, - and ., 1 to 64 characters. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** The name of an `mcpServers` or `a2aAgents` entry, as `mcp:<name>` and `a2a:<name>` write it. */
export const ENTRY_NAME = /^[A-Za-z0-9_.-]+$/;
/** An environment variable name of a script node's or MCP server's `env`. */
export const ENV_NAME = /^[^=\0]+$/;
/** The `type` spellings of a drone (absent too) and of a baneling. */
export const DRONE_TYPES = ['ai', 'drone'] as const;
export const BANELING_TYPES = ['tool', 'baneling'] as const;
/** A drone's `route` values. */
export const ROUTES = ['match', 'choose'] as const;
/** A fan-out's `on_error` values. */
export const ON_ERROR = ['fail', 'continue'] as const;

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
