/**
 * `validate --connect` for js: tools: imports each module a loaded hatchery names (running its top
 * level, which is why a plain load never does this) and checks the export and baneling tool_args.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HatcheryError, type ValidationProblem } from '../core/errors.js';
import type { Hatchery, Tool } from '../engine/contracts.js';
import { refUses, useArgProblems } from './check-args.js';
import { buildTool, type JsRef } from './js-tool.js';
import { type LoadRoots, readPathProblem } from './path-check.js';

/** Finds the tool a js: reference names; throws (a HatcheryError) when it cannot. */
export type JsResolve = (ref: JsRef) => Promise<Tool>;

/**
 * The js: tools of a hatchery, found with `resolve`: a reference whose tool cannot be found, and a
 * baneling's tool_args that do not fit the tool's schema. `banelingsOnly` leaves drone tools out (a
 * run checks what it will call for sure; the model may never call a drone's tool).
 */
export async function jsToolProblems(
  hatchery: Hatchery,
  resolve: JsResolve,
  banelingsOnly = false,
): Promise<ValidationProblem[]> {
  const problems: ValidationProblem[] = [];
  for (const u of refUses(hatchery, 'js')) {
    if (banelingsOnly && !u.args) continue;
    let tool: Tool;
    try {
      tool = await resolve(u.ref);
    } catch (err) {
      problems.push({ path: u.field, message: (err as Error).message });
      continue;
    }
    problems.push(...useArgProblems(u, tool.inputSchema));
  }
  return problems;
}

/** True when a baneling of the hatchery calls a js: tool (what a run checks before its first node). */
export function callsJsTools(hatchery: Hatchery): boolean {
  return refUses(hatchery, 'js').some((u) => u.args !== undefined);
}

/**
 * `validate --connect`: imports the js: modules of a loaded hatchery (only those below the folders a
 * run may read) and reports a module that does not load, an export that is no tool, and baneling
 * tool_args that do not fit the tool's schema.
 */
export function jsCheck(hatchery: Hatchery, roots: LoadRoots): Promise<ValidationProblem[]> {
  return jsToolProblems(hatchery, async (ref) => {
    const outside = readPathProblem(ref.module, hatchery.dir, roots);
    if (outside) throw new HatcheryError('PATH_DENIED', `${ref.ref}: the module ${outside}`);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(resolve(hatchery.dir, ref.module)).href)) as Record<string, unknown>;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ERR_MODULE_NOT_FOUND' ? 'no such module file' : `${e.name}: ${e.message}`;
      throw new HatcheryError('TOOL', `${ref.ref}: the module does not load (${why})`);
    }
    return buildTool(mod, ref);
  });
}
