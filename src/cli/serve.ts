import { HatcheryError } from '../errors.js';

/** Help text of the MCP server command. */
export const SERVE_HELP = `Usage: hatchery-mcp [serve] --dir DIR`;

/** Starts the MCP server (stdio or HTTP); resolves with the exit code on shutdown. */
export async function serveCommand(_argv: string[]): Promise<number> {
  throw new HatcheryError('USAGE', 'the MCP server is not built yet');
}
