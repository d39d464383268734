import { readFile } from 'node:fs/promises';
import { HatcheryError } from '../core/errors.js';
import { type McpServerDef, mcpServersSchema } from '../schema/hatchery.js';
import { describeIssues } from '../schema/issues.js';

/** Reads an MCP config file in Claude Desktop's shape (`{ "mcpServers": { ... } }`). */
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
  return parsed.data;
}
