import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import { type McpServerDef, mcpServersSchema } from '../schema/hatchery.js';
import { anchored, serverCwdProblems } from '../tools/mcp-entry.js';

/**
 * Reads an MCP config file in Claude Desktop's shape (`{ "mcpServers": { ... } }`). Its stdio servers
 * start in the config file's folder unless their `cwd` says otherwise (a relative `cwd` is taken from
 * that folder too), whichever hatchery uses them and whatever the shell's folder.
 */
export async function readMcpConfig(file: string): Promise<Record<string, McpServerDef>> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new HatcheryError(
      'USAGE',
      `--mcp-config ${file}: ${(err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  const servers =
    (raw as { mcpServers?: unknown; servers?: unknown })?.mcpServers ??
    (raw as { servers?: unknown })?.servers;
  const parsed = mcpServersSchema.safeParse(servers ?? {});
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `mcpServers/${i.path.join('/')}: ${i.message}`).join('; ');
    throw new HatcheryError('USAGE', `--mcp-config ${file}: ${why}`, { file });
  }
  const dir = path.dirname(path.resolve(file));
  const problems = serverCwdProblems(parsed.data, dir);
  if (problems.length > 0) {
    const why = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
    // The message names the file itself; a `file` context would print it a second time in front.
    throw new HatcheryError('USAGE', `--mcp-config ${file}: ${why}`, { config: file });
  }
  const out: Record<string, McpServerDef> = {};
  for (const [name, def] of Object.entries(parsed.data)) out[name] = anchored(def, dir);
  return out;
}
