import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import { type McpServerDef, mcpServersSchema } from '../schema/hatchery.js';
import { describeIssues } from '../schema/issues.js';
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
    // One line per problem, each naming the file and the entry, like the problems of a hatchery file.
    const why = describeIssues(parsed.error.issues, servers ?? {}, mcpServersSchema)
      .map((m) => `${file}: mcpServers/${m.segs.map(String).join('/')}: ${m.message}`)
      .join('\n');
    throw new HatcheryError('USAGE', why, { file });
  }
  const dir = path.dirname(path.resolve(file));
  const problems = serverCwdProblems(parsed.data, dir);
  if (problems.length > 0) {
    // One line per problem, as for the schema problems above.
    const why = problems.map((p) => `${file}: ${p.path}: ${p.message}`).join('\n');
    throw new HatcheryError('USAGE', why, { file });
  }
  const out: Record<string, McpServerDef> = {};
  for (const [name, def] of Object.entries(parsed.data)) out[name] = anchored(def, dir);
  return out;
}
