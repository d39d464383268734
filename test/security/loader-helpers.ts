/** Helpers of the loader security tests: the built CLI as a process, and hostile hatchery files. */
import { runCli } from '../helpers.js';

/** Runs the built CLI as a user would; resolves with exit code and both streams. */
export const cli = runCli;

/** A value `depth` objects deep: {"a":{"a":...}}. */
export function nested(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** A hatchery whose echo node's tool_args is nested `depth` levels deep (4 KB at 2,000 levels). */
export function deepDef(name: string, depth = 2000): Record<string, unknown> {
  return {
    name,
    desc: 'nested too deep',
    nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'x', deep: nested(depth) } }],
  };
}
