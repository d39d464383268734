/**
 * `validate --connect` for js: tools: imports each module a loaded hatchery names (running its top
 * level, which is why a plain load never does this) and checks the export and baneling tool_args.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidationProblem } from '../core/errors.js';
import type { Hatchery } from '../engine/contracts.js';
import { checkToolArgs } from './check-args.js';
import { buildTool, type JsRef } from './js.js';
import { type LoadRoots, readPathProblem } from './path-check.js';
import { parseToolRef } from './refs.js';

/** One js: reference of a file: where it is written and, for a baneling, its arguments. */
interface JsUse {
  ref: JsRef;
  field: string;
  args?: { value: unknown; field: string };
}

function usesOf(h: Hatchery): JsUse[] {
  const uses: JsUse[] = [];
  const add = (ref: string, field: string, args?: JsUse['args']) => {
    const parsed = parseToolRef(ref);
    if (!('error' in parsed) && parsed.kind === 'js') uses.push({ ref: parsed, field, args });
  };
  for (const node of h.nodes.values()) {
    const d = h.def.nodes[node.index] as Record<string, unknown>;
    const at = `nodes/${node.index}`;
    if (node.kind === 'baneling' && typeof d.tool_name === 'string')
      add(d.tool_name, `${at}/tool_name`, { value: d.tool_args ?? {}, field: `${at}/tool_args` });
    if (node.kind !== 'drone') continue;
    ((d.tools as string[] | undefined) ?? []).forEach((ref, i) => {
      add(ref, `${at}/tools/${i}`);
    });
    const templates = (d.spawn as { templates?: { tools?: string[] }[] } | undefined)?.templates ?? [];
    templates.forEach((t, k) => {
      (t.tools ?? []).forEach((ref, i) => {
        add(ref, `${at}/spawn/templates/${k}/tools/${i}`);
      });
    });
  }
  return uses;
}

/**
 * Imports the js: modules of a loaded hatchery (only those below the folders a run may read) and
 * reports a module that does not load, an export that is no tool, and baneling tool_args that do not
 * fit the tool's schema.
 */
export async function jsCheck(hatchery: Hatchery, roots: LoadRoots): Promise<ValidationProblem[]> {
  const problems: ValidationProblem[] = [];
  for (const u of usesOf(hatchery)) {
    const outside = readPathProblem(u.ref.module, hatchery.dir, roots);
    if (outside) {
      problems.push({ path: u.field, message: `${u.ref.ref}: the module ${outside}` });
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      const url = pathToFileURL(resolve(hatchery.dir, u.ref.module)).href;
      mod = (await import(url)) as Record<string, unknown>;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ERR_MODULE_NOT_FOUND' ? 'no such module file' : `${e.name}: ${e.message}`;
      problems.push({ path: u.field, message: `${u.ref.ref}: the module does not load (${why})` });
      continue;
    }
    try {
      const tool = buildTool(mod, u.ref);
      if (u.args) {
        for (const p of checkToolArgs(u.ref, u.args.value, tool.inputSchema))
          problems.push({ path: p.path ? `${u.args.field}/${p.path}` : u.args.field, message: p.message });
      }
    } catch (err) {
      problems.push({ path: u.field, message: (err as Error).message });
    }
  }
  return problems;
}
