import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CompileContext } from '../nodes/kind.js';
import { parseToolRef, type ToolRef } from './refs.js';

/** The `name` field of a hatchery file, read without compiling it (hatch: targets may be recursive). */
function peekName(abs: string): string | undefined {
  try {
    const v = JSON.parse(readFileSync(abs, 'utf8')) as { name?: unknown };
    return typeof v.name === 'string' ? v.name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parses and checks one tool reference at load time: unknown built-ins, missing hatch:/js: files and
 * undefined MCP servers are problems at `field`. node: targets are lazy by design and never checked.
 */
export function checkToolRef(ref: string, field: string, cc: CompileContext): ToolRef | undefined {
  const parsed = parseToolRef(ref);
  if ('error' in parsed) {
    cc.problem(field, parsed.error);
    return undefined;
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
          `${parsed.kind}: file "${rel}" not found (looked for ${abs}); paths are relative to this hatchery file`,
        );
        return undefined;
      }
      break;
    }
    case 'mcp':
      if (!(parsed.server in cc.mcpServers)) {
        const known = Object.keys(cc.mcpServers);
        cc.problem(
          field,
          `no MCP server named "${parsed.server}"; define it in "mcpServers" of this file or in the --mcp-config file${known.length ? ` (defined: ${known.join(', ')})` : ''}`,
        );
        return undefined;
      }
      break;
  }
  return parsed;
}

/** The tool name a reference will have, when it is known without starting anything. */
export function staticToolName(ref: ToolRef, dir: string): string | undefined {
  switch (ref.kind) {
    case 'builtin':
      return ref.name;
    case 'node':
      return ref.node;
    case 'hatch':
      return peekName(path.resolve(dir, ref.path));
    case 'mcp':
      return ref.tool;
    case 'js':
      return ref.export;
  }
}

/** Checks a drone's `tools` list: each reference, and no two tools under one name. */
export function compileToolRefs(def: { tools?: string[] }, cc: CompileContext): ToolRef[] {
  const refs: ToolRef[] = [];
  const names = new Map<string, number>();
  (def.tools ?? []).forEach((ref, i) => {
    const parsed = checkToolRef(ref, `tools/${i}`, cc);
    if (!parsed) return;
    const name = staticToolName(parsed, cc.dir);
    if (name !== undefined) {
      const first = names.get(name);
      if (first !== undefined) {
        cc.problem(
          `tools/${i}`,
          `two tools named "${name}" (tools/${first} and tools/${i}); the model could not tell them apart: remove one`,
        );
        return;
      }
      names.set(name, i);
    }
    refs.push(parsed);
  });
  return refs;
}
