import { readFile, stat } from 'node:fs/promises';
import { HatcheryError } from '../core/errors.js';
import { findHatcheryFiles, loadHatcheryText, unexpectedLoadError } from '../loader/load.js';
import { EXIT, parseArgs } from './args.js';
import { readMcpConfig } from './config.js';

/** Help text of `hatchery-mcp validate`. */
export const VALIDATE_HELP = `Usage: hatchery-mcp validate [file or dir]... [options]

Checks hatchery files (folders are searched recursively for *.json; default ./hatchery)
and prints every problem as "file: json/path: message".

Options:
  --mcp-config FILE   MCP servers that mcp: tool references may name
  -h, --help          show this help

Exit codes: 0 all valid, 2 bad command line, 3 problems found.`;

/** `hatchery-mcp validate`: returns the exit code. */
export async function validateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs(argv, {
    'mcp-config': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(`${VALIDATE_HELP}\n`);
    return EXIT.OK;
  }
  const mcpServers = values['mcp-config'] ? await readMcpConfig(values['mcp-config']) : undefined;
  const targets = positionals.length > 0 ? positionals : ['hatchery'];
  const files: string[] = [];
  for (const t of targets) {
    let isDir: boolean;
    try {
      isDir = (await stat(t)).isDirectory();
    } catch {
      throw new HatcheryError('USAGE', `${t}: no such file or folder`);
    }
    files.push(...(isDir ? await findHatcheryFiles(t) : [t]));
  }
  let bad = 0;
  for (const f of files) {
    let res: ReturnType<typeof loadHatcheryText>;
    try {
      res = loadHatcheryText(await readFile(f, 'utf8'), f, { mcpServers });
    } catch (err) {
      // One unreadable or unloadable file is reported with its name; the others are still checked.
      bad++;
      const code = (err as NodeJS.ErrnoException).code;
      process.stdout.write(`${f}: ${code ? `cannot read the file: ${code}` : unexpectedLoadError(err)}\n`);
      continue;
    }
    if (res.ok) {
      process.stdout.write(
        `${f}: ok (${res.hatchery.name}, ${res.hatchery.nodes.size} node${res.hatchery.nodes.size === 1 ? '' : 's'})\n`,
      );
    } else {
      bad++;
      process.stdout.write(`${res.error.message}\n`);
    }
  }
  if (files.length === 0) process.stderr.write(`no *.json files found in ${targets.join(', ')}\n`);
  process.stderr.write(`${files.length - bad} valid, ${bad} invalid\n`);
  return bad > 0 ? EXIT.INVALID : EXIT.OK;
}
