import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { packagePaths } from '../core/package.js';
import { shellQuote } from '../core/shell.js';
import { VENDORS } from '../providers/vendors.js';

/** The folder this copy of hatchery-mcp is installed in (the package root: dist/, schema/, ...). */
export const INSTALL_ROOT = packagePaths().root;

/** The bin script of this install: what a client starts with node. */
export const CLI_JS = path.join(INSTALL_ROOT, 'dist', 'cli.js');

/** The editor JSON Schema of hatchery files shipped with this install. */
export const SCHEMA_FILE = path.join(INSTALL_ROOT, 'schema', 'hatchery.schema.json');

/** Where Claude Desktop reads its config on each system, this machine's written out and marked. */
function claudeDesktopConfigPaths(): string {
  const name = 'claude_desktop_config.json';
  const appData = process.env.APPDATA;
  const here = { darwin: 'macOS', win32: 'Windows' }[process.platform as string] ?? 'Linux';
  return [
    [
      'macOS',
      `~/Library/Application Support/Claude/${name}`,
      path.join(homedir(), 'Library/Application Support/Claude', name),
    ],
    ['Windows', `%APPDATA%\\Claude\\${name}`, appData && path.join(appData, 'Claude', name)],
    ['Linux', `~/.config/Claude/${name}`, path.join(homedir(), '.config/Claude', name)],
  ]
    .map(([os, file, real]) => `    ${os}: ${os === here ? `${real || file}   <- this machine` : file}`)
    .join('\n');
}

/** The whole "connect a client" text init prints: every block, where it goes, and the key note. */
export function clientConfigText(dir: string): string {
  const launch = { command: process.execPath, args: [CLI_JS, '--dir', path.resolve(dir)] };
  // Placeholders, never a real value, even when the user has a key set; an empty value counts as not set.
  const env = Object.fromEntries(VENDORS.map((v) => [v.keyVar, `<your ${v.name} API key, or empty>`]));
  const entry = { ...launch, env };
  const block = (v: unknown) => JSON.stringify(v, null, 2).replace(/^/gm, '    ');
  const claudeCode = ['claude', 'mcp', 'add', 'hatchery', '--', launch.command, ...launch.args]
    .map((w) => shellQuote(w))
    .join(' ');
  const missingCli = existsSync(CLI_JS)
    ? ''
    : `\n  Note: ${CLI_JS} does not exist yet: run "npm run build" in ${INSTALL_ROOT} first.\n`;
  return `Connect an MCP client (paths are this machine's; the server needs node, not npx):
${missingCli}
  Claude Desktop: merge into claude_desktop_config.json, then restart Claude Desktop
${claudeDesktopConfigPaths()}
${block({ mcpServers: { hatchery: entry } })}

  VS Code: .vscode/mcp.json in your workspace (note "servers" and "type")
${block({ servers: { hatchery: { type: 'stdio', ...entry } } })}

  Cursor: .cursor/mcp.json in your project (or ~/.cursor/mcp.json for every project)
${block({ mcpServers: { hatchery: entry } })}

  Claude Code: run once (add -e ${VENDORS[0].keyVar}=... after "hatchery" if Claude Code does not
  inherit your key from this shell)
    ${claudeCode}

  In "env", paste the key you have and set the other to "" (an empty value counts as not set).`;
}
