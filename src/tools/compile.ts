import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isInside, realish } from '../core/fs/safe-fs.js';
import type { CompileContext, Hatchery, ToolRef } from '../engine/contracts.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { didYouMean } from '../schema/suggest.js';
import { type A2aRefWithDef, isAgentUrl } from './a2a/agent-def.js';
import { anchored, parseServerEntry } from './mcp-entry.js';
import { parseToolRef } from './refs.js';

/** An mcp: reference with its server definition, attached at load time (the file's and --mcp-config's servers). */
export type McpRefWithDef = Extract<ToolRef, { kind: 'mcp' }> & { def?: McpServerDef };

/** hatch: sub-files loaded at load time, by their reference (for tool_args and tool name checks). */
const loadedSubs = new WeakMap<ToolRef, Hatchery>();

/** The sub-hatchery a hatch: reference loaded at load time, if it was checked and is valid. */
export function loadedSub(ref: ToolRef): Hatchery | undefined {
  return loadedSubs.get(ref);
}

/**
 * The `name` field of a hatchery file, read without compiling it (hatch: targets may be recursive).
 * Only files below the hatchery's own folder are read at load time: other folders are confined to
 * the run's roots, which are known only when it runs (its tool names are checked then).
 */
function peekName(abs: string, dir: string): string | undefined {
  if (!isInside(realish(abs), realish(dir))) return undefined;
  try {
    const v = JSON.parse(readFileSync(abs, 'utf8')) as { name?: unknown };
    return typeof v.name === 'string' ? v.name : undefined;
  } catch {
    return undefined;
  }
}

/** For an unknown bare name that is a node of this file or a file beside it, the reference meant. */
function bareNameHint(ref: string, cc: CompileContext): string {
  if (ref.includes(':')) return '';
  if (cc.graph.node(ref)) return `; to call the node "${ref}" as a tool, write "node:${ref}"`;
  if (/\.(json|ya?ml)$/.test(ref) && existsSync(path.resolve(cc.dir, ref)))
    return `; to call the hatchery file as a tool, write "hatch:${ref}"`;
  return '';
}

/** Extensions of the files a `hatch:` or `js:` reference can name. */
const REF_FILE = { hatch: /\.(json|ya?ml)$/, js: /\.(m|c)?js$/ } as const;

/**
 * ` (did you mean "hello.json"?)` for the nearest file of the kind beside a missing one, or ''. Reads
 * the folder, so only on that error path; the loader uses it for a missing hatchery file too.
 */
export function nearestSibling(abs: string, kind: keyof typeof REF_FILE): string {
  let names: string[];
  try {
    names = readdirSync(path.dirname(abs));
  } catch {
    return '';
  }
  return didYouMean(
    path.basename(abs),
    names.filter((n) => REF_FILE[kind].test(n)),
  );
}

/**
 * The js: references checked in one load (by its graph), by folder and text: every node naming one
 * function shares one reference object, so a run's look-up of its module (JsTools, by reference) hits
 * one hot entry instead of one per node (a cache miss per branch of a wide fan-out).
 */
const jsRefs = new WeakMap<object, Map<string, ToolRef>>();

/**
 * Parses and checks one tool reference at load time: unknown built-ins, missing hatch:/js: files and
 * undefined MCP servers are problems at `field`. node: targets are lazy by design and never checked.
 */
export function checkToolRef(ref: string, field: string, cc: CompileContext): ToolRef | undefined {
  const parsed = parseToolRef(ref);
  if ('error' in parsed) {
    cc.problem(field, parsed.error + bareNameHint(ref, cc));
    return undefined;
  }
  let shared: Map<string, ToolRef> | undefined;
  const key = `${cc.dir}\0${ref}`;
  if (parsed.kind === 'js') {
    shared = jsRefs.get(cc.graph);
    const known = shared?.get(key);
    if (known !== undefined) return known;
  }
  switch (parsed.kind) {
    case 'hatch':
    case 'js': {
      const rel = parsed.kind === 'hatch' ? parsed.path : parsed.module;
      const abs = path.resolve(cc.dir, rel);
      cc.dependency(abs);
      if (!existsSync(abs)) {
        cc.problem(
          field,
          `"${ref}": file "${rel}" not found (looked for ${abs})${nearestSibling(abs, parsed.kind)}; paths are relative to this hatchery file`,
        );
        return undefined;
      }
      if (parsed.kind === 'hatch' && cc.hatchery) {
        const sub = cc.hatchery(parsed.path, (message, fix) => cc.problem(field, message, fix));
        if (sub) loadedSubs.set(parsed, sub);
      }
      if (parsed.kind === 'js') {
        if (shared === undefined) {
          shared = new Map();
          jsRefs.set(cc.graph, shared);
        }
        shared.set(key, parsed);
      }
      break;
    }
    case 'mcp': {
      const def = Object.hasOwn(cc.mcpServers, parsed.server) ? cc.mcpServers[parsed.server] : undefined;
      if (!def) {
        const known = Object.keys(cc.mcpServers);
        cc.problem(
          field,
          `"${ref}": no MCP server named "${parsed.server}"; define it in "mcpServers" of this file or in the --mcp-config file${known.length ? ` (defined: ${known.join(', ')})` : ''}`,
        );
        return undefined;
      }
      const withDef: McpRefWithDef = { ...parsed, def: anchored(def, cc.dir) };
      return withDef;
    }
    case 'a2a': {
      if (isAgentUrl(parsed.agent)) break;
      const agents = cc.def.a2aAgents ?? {};
      if (!Object.hasOwn(agents, parsed.agent)) {
        const known = Object.keys(agents);
        cc.problem(
          field,
          `"${ref}": no A2A agent named "${parsed.agent}"${didYouMean(parsed.agent, known)}; define it in "a2aAgents" of this file${known.length ? ` (defined: ${known.join(', ')})` : ''}, or write the agent's URL: a2a:https://...`,
        );
        return undefined;
      }
      const withDef: A2aRefWithDef = { ...parsed, def: agents[parsed.agent] };
      return withDef;
    }
  }
  return parsed;
}

/** The tool name a reference will have, when it is known without starting anything. */
function staticToolName(ref: ToolRef, dir: string): string | undefined {
  switch (ref.kind) {
    case 'builtin':
      return ref.name;
    case 'node':
      return ref.node;
    case 'hatch':
      return loadedSubs.get(ref)?.name ?? peekName(path.resolve(dir, ref.path), dir);
    case 'mcp':
      return ref.tool;
    case 'js':
      return ref.export;
  }
}

/**
 * Checks a drone's `tools` list and `mcp` servers: each reference, and no two tools under one name
 * (as far as names are known without starting a server; the rest is checked when the drone runs).
 */
export function compileToolRefs(def: { tools?: string[]; mcp?: string[] }, cc: CompileContext): ToolRef[] {
  const refs: ToolRef[] = [];
  const names = new Map<string, string>();
  const seen = new Map<string, string>();
  const add = (parsed: ToolRef | McpRefWithDef, field: string) => {
    const same = seen.get(parsed.ref);
    if (same !== undefined) {
      cc.problem(field, `"${parsed.ref}" is listed twice (${same} and ${field}): remove one`);
      return;
    }
    const name = staticToolName(parsed, cc.dir);
    if (name !== undefined) {
      const first = names.get(name);
      if (first !== undefined) {
        cc.problem(
          field,
          `two tools named "${name}" (${first} and ${field}: "${parsed.ref}"); the model could not tell them apart: remove one`,
        );
        return;
      }
      names.set(name, field);
    }
    seen.set(parsed.ref, field);
    refs.push(parsed);
  };
  (def.tools ?? []).forEach((ref, i) => {
    const parsed = checkToolRef(ref, `tools/${i}`, cc);
    if (parsed) add(parsed, `tools/${i}`);
  });
  // The servers of a drone's `mcp` list (the original Hatchery's form), each offering all its tools.
  (def.mcp ?? []).forEach((entry, i) => {
    const server = parseServerEntry(entry, cc.dir);
    if ('error' in server) cc.problem(`mcp/${i}`, `${server.error} (in "${entry}")`);
    // The entry itself names the server, so one command line used by several drones shares one process.
    else add({ kind: 'mcp', ref: `mcp:${entry.trim()}`, server: entry.trim(), def: server }, `mcp/${i}`);
  });
  return refs;
}
