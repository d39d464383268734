import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { HatcheryError, ValidationError } from '../core/errors.js';
import { findTestFiles, type LoadedTestFile, loadTestFile } from '../runtime/testing/load.js';
import { runTestFile } from '../runtime/testing/runner.js';
import { EXIT, parseCommand } from './args.js';
import { printErr, printOut } from './print.js';
import { RUNTIME_FLAGS, runtimeOptions } from './runtime-flags.js';

/** Help text of `hatchery-mcp test`. */
export const TEST_HELP = `Usage: hatchery-mcp test [path]... [options]

Runs test files (*.test.yaml, *.test.yml, *.test.json) found at each path (default ./hatchery):
each case runs its hatchery with an input and variables, answers model and MCP/http_request calls
from its cassette (no network, no API key), and checks the output, the nodes taken and the tokens.
A test run is hermetic: a drone that names no model uses the one its cassette recorded, whatever
HATCHERY_MODEL, API keys or base URLs the shell holds.

Options:
  --record-missing    make the calls a cassette lacks for real (API keys needed) and append them
  --allow-root, --allow-write, --allow-shell, --allow-host, --allow-private-network,
  --mcp-config, --max-steps, --budget-*, --prices   as for run
  -h, --help          show this help

Exit codes: 0 every case passed, 1 a case failed, 2 bad command line or no test files,
3 an invalid test file (every problem listed with file, path, line and column).`;

/** `hatchery-mcp test`: returns the exit code. */
export async function testCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'test', TEST_HELP, {
    ...RUNTIME_FLAGS,
    'record-missing': { type: 'boolean' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  const recordMissing = values['record-missing'] === true;
  const paths = positionals.length > 0 ? positionals : ['hatchery'];
  if (positionals.length === 0 && !existsSync(paths[0]!)) {
    throw new HatcheryError(
      'USAGE',
      'no path named and no ./hatchery folder: name test files or folders, or create a first hatchery with its test: hatchery-mcp init',
    );
  }
  const files: string[] = [];
  for (const p of paths) files.push(...(await findTestFiles(p)));
  if (files.length === 0) {
    printErr(`error: no test files (*.test.yaml, *.test.json) under ${paths.join(', ')}\n`);
    return EXIT.USAGE;
  }
  // Every file is checked before any case runs: a broken test file is reported whole, at once.
  const loaded: LoadedTestFile[] = [];
  let invalid = false;
  for (const f of files) {
    try {
      loaded.push(await loadTestFile(f, recordMissing));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      printErr(`${err.message}\n`);
      invalid = true;
    }
  }
  if (invalid) return EXIT.INVALID;
  const runtime = await runtimeOptions(values);
  let passed = 0;
  let failed = 0;
  for (const t of loaded) {
    printOut(`${relative(process.cwd(), t.file) || t.file}\n`);
    await runTestFile(t, {
      runtime,
      recordMissing,
      onCase: (r) => {
        if (r.passed) passed++;
        else failed++;
        const mark = r.passed ? '✓' : '✗';
        printOut(`  ${mark} ${r.name} (${Math.round(r.ms)} ms)\n`);
        for (const f of r.failures) printOut(`      ${f.replace(/\n/g, '\n      ')}\n`);
      },
    });
  }
  printOut(`${passed} passed, ${failed} failed\n`);
  return failed > 0 ? EXIT.RUN_FAILED : EXIT.OK;
}
