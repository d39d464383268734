import type { ValidationProblem } from '../core/errors.js';
import { clientFallbackProblem, modelSpecProblem } from '../providers/resolve.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import { serverCwdProblems } from '../tools/mcp-entry.js';
import { type LoadRoots, readPathProblem } from '../tools/path-check.js';

/** Load-time checks of top-level fields: the `model` and `client_fallback` provider prefixes, constant `files` paths. */
export function checkTopLevel(
  def: HatcheryDef,
  dir: string,
  roots: LoadRoots | undefined,
  problems: ValidationProblem[],
): void {
  // A file whose drones name their own base_url may use a server's ids with a colon (llama3:8b) as its model.
  const ownServer = def.nodes.some((n) => typeof (n as { base_url?: unknown }).base_url === 'string');
  const why = def.model === undefined || ownServer ? undefined : modelSpecProblem(def.model);
  if (why) problems.push({ path: 'model', message: why });
  const fallbackWhy =
    def.client_fallback === undefined ? undefined : clientFallbackProblem(def.client_fallback);
  if (fallbackWhy) problems.push({ path: 'client_fallback', message: fallbackWhy });
  problems.push(...serverCwdProblems(def.mcpServers, dir));
  if (!roots) return;
  for (const [key, rel] of Object.entries(def.files ?? {})) {
    const outside = readPathProblem(rel, dir, roots);
    if (outside) problems.push({ path: `files/${key}`, message: outside });
  }
}
