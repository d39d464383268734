import { readFileSync } from 'node:fs';
import { formatError, HatcheryError, ValidationError } from '../core/errors.js';
import { hatcheryJsonSchema } from '../schema/json-schema.js';
import { EXIT } from './args.js';
import { RUN_HELP, runCommand } from './run.js';
import { SERVE_HELP, serveCommand } from './serve.js';
import { VALIDATE_HELP, validateCommand } from './validate.js';

/** The package version, read from package.json next to dist/. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

const HELP = `hatchery-mcp: JSON-defined LLM workflows, run from the shell or served as MCP tools.

Usage:
  hatchery-mcp [serve] [--dir hatchery] [options]   serve every hatchery as an MCP tool (stdio)
  hatchery-mcp run <file> [--input TEXT] [--set k=v]  run one hatchery, print its output
  hatchery-mcp validate [file or dir]...              check files, list every problem
  hatchery-mcp schema                                 print the JSON Schema of hatchery files

Run "hatchery-mcp <command> --help" for the options of a command.
Global: -h, --help; -v, --version.

Exit codes: 0 success, 1 run failed, 2 bad command line, 3 invalid hatchery file, 130 cancelled.`;

/** Dispatches a command line; resolves to the process exit code. Never throws for user errors. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    switch (first) {
      case 'run':
        return await runCommand(rest);
      case 'validate':
        return await validateCommand(rest);
      case 'serve':
        return await serveCommand(rest);
      case 'schema':
        process.stdout.write(`${JSON.stringify(hatcheryJsonSchema(), null, 2)}\n`);
        return EXIT.OK;
      case 'help':
      case '-h':
      case '--help':
        process.stdout.write(
          `${rest[0] === 'run' ? RUN_HELP : rest[0] === 'validate' ? VALIDATE_HELP : rest[0] === 'serve' ? SERVE_HELP : HELP}\n`,
        );
        return EXIT.OK;
      case '-v':
      case '--version':
        process.stdout.write(`${version()}\n`);
        return EXIT.OK;
      default:
        if (first === undefined || first.startsWith('-')) return await serveCommand(argv);
        throw new HatcheryError('USAGE', `unknown command "${first}"\n\n${HELP}`);
    }
  } catch (err) {
    process.stderr.write(`${err instanceof ValidationError ? err.message : `error: ${formatError(err)}`}\n`);
    if (err instanceof ValidationError) return EXIT.INVALID;
    if (err instanceof HatcheryError && err.code === 'USAGE') return EXIT.USAGE;
    return EXIT.RUN_FAILED;
  }
}
