import type { ToolRef } from '../engine/contracts.js';
import { ENTRY_NAME } from '../schema/names.js';
import { didYouMean, quote } from '../schema/suggest.js';

/** The prefixes of tool references that are not built-in names. */
const PREFIXES: readonly string[] = ['hatch:', 'node:', 'mcp:', 'js:', 'a2a:'];

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
      error: `unknown tool ${quote(ref)}${didYouMean(ref, names)}: use a built-in (${names.join(', ')}), hatch:<file>, node:<Name>, mcp:<server>[/<tool>], js:<module>#<export> or a2a:<agent>[#<skill>]`,
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
    case 'a2a':
      return parseA2aRef(ref, rest);
    default:
      return {
        error: `unknown tool reference prefix "${prefix}:" in "${ref}"${didYouMean(`${prefix}:`, PREFIXES)}: use hatch:, node:, mcp:, js: or a2a:`,
      };
  }
}

/**
 * `a2a:<name>` or `a2a:<http(s) URL>`, optionally `#<skill id>`: the last `#` names the skill (a URL's
 * fragment is never sent to a server, so it cannot be part of the agent's address).
 */
function parseA2aRef(ref: string, rest: string): ToolRef | { error: string } {
  const hash = rest.lastIndexOf('#');
  const agent = hash < 0 ? rest : rest.slice(0, hash);
  const skill = hash < 0 ? undefined : rest.slice(hash + 1);
  const form = 'must be a2a:<agent name>, a2a:<http(s) URL>, or either with #<skill id>';
  if (!agent || skill === '') return { error: `tool reference "${ref}" ${form}` };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(agent)) {
    let url: URL;
    try {
      url = new URL(agent);
    } catch {
      return { error: `tool reference "${ref}": "${agent}" is not a valid URL` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return {
        error: `tool reference "${ref}": an agent URL must be http:// or https://, not ${url.protocol}`,
      };
    if (url.username || url.password)
      return {
        error: `tool reference "${ref}": put credentials in the "headers" of an a2aAgents entry, not in the URL`,
      };
  } else if (!ENTRY_NAME.test(agent)) {
    return { error: `tool reference "${ref}" ${form}` };
  }
  return skill === undefined ? { kind: 'a2a', ref, agent } : { kind: 'a2a', ref, agent, skill };
}
