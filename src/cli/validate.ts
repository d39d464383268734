import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { formatProblem, HatcheryError, type ValidationProblem } from '../core/errors.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { listHatcheryFileNames, loadHatcheryText, unexpectedLoadError } from '../loader/load.js';
import { nearestSibling } from '../tools/compile.js';
import { runtimeRoots } from '../tools/path-check.js';
import { EXIT, parseCommand } from './args.js';
import { readMcpConfig } from './config.js';
import { printableJson, printErr, printOut } from './print.js';
import { networkOptions } from './runtime-flags.js';

/** Help text of `hatchery-mcp validate`. */
export const VALIDATE_HELP = `Usage: hatchery-mcp validate [file or dir]... [options]

Checks hatchery files (folders are searched recursively for *.json, *.yaml and *.yml,
leaving out what .hatcheryignore lists and files that are no hatchery; default ./hatchery)
and prints every problem as "file: json/path (line L, column C): message"; warnings
say "warning:" and do not fail the check unless --strict is given.

Options:
  --json              one JSON object per line on stdout, nothing else:
                        {"file","path","line","column","severity","message","fix"} per problem,
                        {"file","ok":true,"name","nodes","inputRequired"} per valid file
  --strict            warnings fail the check too (exit 3)
  --connect           start the MCP servers, fetch the A2A agents' cards and import the js:
                      modules the files name (this runs their code), and check those tools:
                      names, skills, and baneling tool_args against each tool's input schema
  --allow-host HOST   with --connect: an A2A agent on this machine or a private network that
                      may be reached (as for run and serve; repeatable)
  --allow-private-network
                      with --connect: every address may be reached
  --allow-root DIR    a folder runs may read besides the file's own and the current one
                      (as for run and serve; constant files/hatch: paths are checked against them)
  --allow-write DIR   a folder runs may write (constant write_output paths are checked)
  --mcp-config FILE   MCP servers that mcp: tool references may name
  -h, --help          show this help

Exit codes: 0 all valid, 2 bad command line, 3 problems found (errors, or warnings with --strict).`;

/** What one file's check found: its problems (errors and warnings), and the hatchery when it loads. */
export interface FileReport {
  file: string;
  hatchery?: Hatchery;
  problems: readonly ValidationProblem[];
  /** The file parses but is no hatchery (no "nodes"): skipped when a folder scan found it. */
  notHatchery?: boolean;
  /** The file could not be read or loaded at all; printed as `file: message`, as before problems existed. */
  unreadable?: string;
}

/** `hatchery-mcp validate`: returns the exit code. */
export async function validateCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'validate', VALIDATE_HELP, {
    json: { type: 'boolean' },
    strict: { type: 'boolean' },
    connect: { type: 'boolean' },
    'allow-root': { type: 'string', multiple: true },
    'allow-write': { type: 'string', multiple: true },
    'mcp-config': { type: 'string' },
    'allow-host': { type: 'string', multiple: true },
    'allow-private-network': { type: 'boolean' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  const mcpServers = values['mcp-config'] ? await readMcpConfig(values['mcp-config']) : undefined;
  const targets = positionals.length > 0 ? positionals : ['hatchery'];
  // Files found in a folder, as opposed to named: one that is no hatchery is skipped quietly.
  const scanned = new Set<string>();
  const files: string[] = [];
  for (const t of targets) {
    let isDir: boolean;
    try {
      isDir = (await stat(t)).isDirectory();
    } catch {
      throw new HatcheryError(
        'USAGE',
        positionals.length > 0
          ? `${t}: no such file or folder${nearestSibling(path.resolve(t), 'hatch')}`
          : `no file named and no ./${t} folder: name files or folders to check, or create a first one with: hatchery-mcp init`,
      );
    }
    if (!isDir) files.push(t);
    else
      for (const f of await listHatcheryFileNames(t)) {
        scanned.add(f);
        files.push(f);
      }
  }
  const format = values.json ? jsonReport : textReport;
  const network = await networkOptions(values);
  // The roots `run` would confine these files to, so constant paths are judged as a run would.
  const options: LoadOptions = {
    mcpServers,
    roots: runtimeRoots({ allowRoots: values['allow-root'], allowWrite: values['allow-write'] }),
  };
  let bad = 0;
  let checked = 0;
  for (const file of files) {
    let report = await checkFile(file, options);
    if (report.notHatchery && scanned.has(file)) continue;
    checked++;
    if (values.connect && report.hatchery) {
      const { connectCheck } = await import('../tools/connect-check.js');
      const { jsCheck } = await import('../tools/js-check.js');
      const found = [
        ...(await connectCheck(report.hatchery, { mcpServers, network })),
        ...(await jsCheck(report.hatchery, options.roots!)),
      ];
      // A server that does not answer or a tool it lacks fails the file, like a load error.
      if (found.length > 0) report = { file, problems: [...found, ...report.problems] };
    }
    printOut(format(report));
    if (fails(report, values.strict === true)) bad++;
  }
  if (checked === 0) printErr(`no hatchery files (*.json, *.yaml, *.yml) found in ${targets.join(', ')}\n`);
  printErr(`${checked - bad} valid, ${bad} invalid\n`);
  return bad > 0 ? EXIT.INVALID : EXIT.OK;
}

/** Reads and loads one file; an unreadable or unloadable file is a problem of that file, not an exception. */
export async function checkFile(file: string, options: LoadOptions): Promise<FileReport> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    return unreadable(file, `cannot read the file: ${code}`);
  }
  try {
    const res = loadHatcheryText(text, file, options);
    return res.ok
      ? { file, hatchery: res.hatchery, problems: res.hatchery.warnings }
      : { file, problems: res.error.problems, notHatchery: res.notHatchery };
  } catch (err) {
    return unreadable(file, unexpectedLoadError(err));
  }
}

function unreadable(file: string, message: string): FileReport {
  return { file, problems: [{ path: '', message }], unreadable: message };
}

/** True when the file fails the check: it does not load, or it has warnings and `strict` is on. */
export function fails(report: FileReport, strict: boolean): boolean {
  return !report.hatchery || (strict && report.problems.length > 0);
}

/** The text lines of one file: "ok (...)" when it loads, then one formatProblem line per problem. */
export function textReport({ file, hatchery, problems, unreadable }: FileReport): string {
  const lines = unreadable ? [`${file}: ${unreadable}`] : problems.map((p) => formatProblem(file, p));
  if (hatchery) {
    const n = hatchery.nodes.size;
    const input = hatchery.inputRequired ? ', needs input' : '';
    lines.unshift(`${file}: ok (${hatchery.name}, ${n} node${n === 1 ? '' : 's'}${input})`);
  }
  return `${lines.join('\n')}\n`;
}

/** One JSON line per problem, then `{"file","ok":true,...}` when the file loads. */
export function jsonReport({ file, hatchery, problems }: FileReport): string {
  const lines = problems.map((p) =>
    printableJson({
      file,
      path: p.path,
      line: p.line ?? null,
      column: p.column ?? null,
      severity: p.severity ?? 'error',
      message: p.message,
      fix: p.fix ?? null,
    }),
  );
  if (hatchery) {
    lines.push(
      printableJson({
        file,
        ok: true,
        name: hatchery.name,
        nodes: hatchery.nodes.size,
        inputRequired: hatchery.inputRequired,
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}
