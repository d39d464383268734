import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../core/shell.js';
import { VENDORS } from '../providers/vendors.js';

/** The folder this copy of hatchery-mcp is installed in (the package root: dist/, schema/, ...). */
export const INSTALL_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The bin script of this install: what a client starts with node. */
export const CLI_JS = path.join(INSTALL_ROOT, 'dist', 'cli.js');

/** The editor JSON Schema of hatchery files shipped with this install. */
export const SCHEMA_FILE = path.join(INSTALL_ROOT, 'schema', 'hatchery.schema.json');

/**
 * Placeholders of the API keys in printed config blocks: never a real value, even when the user has a
 * key set. An empty value counts as not set, so a user with one vendor empties the other.
 */
export const KEY_PLACEHOLDERS: Readonly<Record<string, string>> = Object.fromEntries(
  VENDORS.map((v) => [v.keyVar, `<your ${v.name} API key, or empty>`]),
);

/** How a client starts the server: absolute node, absolute cli.js, absolute folder. */
export interface ServerLaunch {
  command: string;
  args: string[];
}

/** The launch of this install serving `dir` (made absolute): `node <cli.js> --dir <dir>`. */
export function serverLaunch(dir: string): ServerLaunch {
  return { command: process.execPath, args: [CLI_JS, '--dir', path.resolve(dir)] };
}

/** Where Claude Desktop reads its config on each system; `current` marks this machine's, written out. */
export function claudeDesktopConfigPaths(): { os: string; file: string; current: boolean }[] {
  const here = process.platform;
  const home = homedir();
  const name = 'claude_desktop_config.json';
  return [
    {
      os: 'macOS',
      file:
        here === 'darwin'
          ? path.join(home, 'Library/Application Support/Claude', name)
          : `~/Library/Application Support/Claude/${name}`,
      current: here === 'darwin',
    },
    {
      os: 'Windows',
      file:
        here === 'win32' && process.env.APPDATA
          ? path.join(process.env.APPDATA, 'Claude', name)
          : `%APPDATA%\\Claude\\${name}`,
      current: here === 'win32',
    },
    {
      os: 'Linux',
      file:
        here !== 'darwin' && here !== 'win32'
          ? path.join(home, '.config/Claude', name)
          : `~/.config/Claude/${name}`,
      current: here !== 'darwin' && here !== 'win32',
    },
  ];
}

/** The config blocks of each client, as printed text with absolute paths for this machine. */
export interface ClientBlocks {
  claudeDesktop: string;
  vscode: string;
  cursor: string;
  claudeCode: string;
}

/** Builds the JSON blocks and the Claude Code command line for serving `dir`. */
export function clientBlocks(dir: string): ClientBlocks {
  const launch = serverLaunch(dir);
  const env = { ...KEY_PLACEHOLDERS };
  const entry = { command: launch.command, args: launch.args, env };
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return {
    claudeDesktop: json({ mcpServers: { hatchery: entry } }),
    vscode: json({ servers: { hatchery: { type: 'stdio', ...entry } } }),
    cursor: json({ mcpServers: { hatchery: entry } }),
    claudeCode: ['claude', 'mcp', 'add', 'hatchery', '--', launch.command, ...launch.args]
      .map((w) => shellQuote(w))
      .join(' '),
  };
}

/** The whole "connect a client" text init prints: every block, where it goes, and the key note. */
export function clientConfigText(dir: string): string {
  const b = clientBlocks(dir);
  const desktop = claudeDesktopConfigPaths()
    .map((p) => `    ${p.os}: ${p.file}${p.current ? '   <- this machine' : ''}`)
    .join('\n');
  const indent = (text: string) => text.replace(/^/gm, '    ');
  const missingCli = existsSync(CLI_JS)
    ? ''
    : `\n  Note: ${CLI_JS} does not exist yet: run "npm run build" in ${INSTALL_ROOT} first.\n`;
  return `Connect an MCP client (paths are this machine's; the server needs node, not npx):
${missingCli}
  Claude Desktop: merge into claude_desktop_config.json, then restart Claude Desktop
${desktop}
${indent(b.claudeDesktop)}

  VS Code: .vscode/mcp.json in your workspace (note "servers" and "type")
${indent(b.vscode)}

  Cursor: .cursor/mcp.json in your project (or ~/.cursor/mcp.json for every project)
${indent(b.cursor)}

  Claude Code: run once (add -e ${VENDORS[0].keyVar}=... after "hatchery" if Claude Code does not
  inherit your key from this shell)
    ${b.claudeCode}

  In "env", paste the key you have and set the other to "" (an empty value counts as not set).`;
}
