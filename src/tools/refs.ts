import type { ToolRef } from '../engine/contracts.js';
import { didYouMean, quote } from '../schema/suggest.js';

/** The prefixes of tool references that are not built-in names. */
const PREFIXES: readonly string[] = ['hatch:', 'node:', 'mcp:', 'js:'];

/**
 * The built-in tool names, shell_exec included (whether it is enabled is checked at call time).
 * Names only, so parsing a reference loads no tool; test/tools/builtin-names.test.ts holds them
 * equal to the tools of tools/builtin/index.ts.
 */
export const BUILTIN_TOOL_NAMES: readonly string[] = [
  'read_file',
  'write_file',
  'echo',
  'list_dir',
  'http_request',
  'shell_exec',
];

/** Parses a tool reference; returns an error message for a malformed or unknown one. */
export function parseToolRef(ref: string): ToolRef | { error: string } {
  const colon = ref.indexOf(':');
  if (colon < 0) {
    const names = BUILTIN_TOOL_NAMES;
    if (names.includes(ref)) return { kind: 'builtin', ref, name: ref };
    return {
      error: `unknown tool ${quote(ref)}${didYouMean(ref, names)}: use a built-in (${names.join(', ')}), hatch:<file>, node:<Name>, mcp:<server>[/<tool>] or js:<module>#<export>`,
    };
  }
  const prefix = ref.slice(0, colon);
  const rest = ref.slice(colon + 1);
  if (!rest) return { error: `tool reference "${ref}" has nothing after "${prefix}:"` };
  switch (prefix) {
    case 'hatch':
      return { kind: 'hatch', ref, path: rest };
    case 'node':
      return { kind: 'node', ref, node: rest };
    case 'mcp': {
      const slash = rest.indexOf('/');
      if (slash === 0 || slash === rest.length - 1)
        return { error: `tool reference "${ref}" must be mcp:<server> or mcp:<server>/<tool>` };
      return slash < 0
        ? { kind: 'mcp', ref, server: rest }
        : { kind: 'mcp', ref, server: rest.slice(0, slash), tool: rest.slice(slash + 1) };
    }
    case 'js': {
      const hash = rest.lastIndexOf('#');
      if (hash <= 0 || hash === rest.length - 1)
        return { error: `tool reference "${ref}" must be js:<module path>#<export name>` };
      return { kind: 'js', ref, module: rest.slice(0, hash), export: rest.slice(hash + 1) };
    }
    default:
      return {
        error: `unknown tool reference prefix "${prefix}:" in "${ref}"${didYouMean(`${prefix}:`, PREFIXES)}: use hatch:, node:, mcp: or js:`,
      };
  }
}
