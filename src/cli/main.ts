import { formatError, HatcheryError, ValidationError } from '../core/errors.js';
import { packageVersion } from '../core/version.js';
import { EXIT, parseArgs, unknownCommand } from './args.js';

// Commands are imported when they run: --version, help and validate then start without loading the
// MCP server, the vendor SDKs or the runtime they do not use.

const HELP = `hatchery-mcp: JSON-defined LLM workflows, run from the shell or served as MCP tools.

Usage:
  hatchery-mcp [serve] [--dir hatchery] [options]   serve every hatchery as an MCP tool (stdio)
  hatchery-mcp run <file> [--input TEXT] [--set k=v]  run one hatchery, print its output
  hatchery-mcp validate [file or dir]...              check files, list every problem
  hatchery-mcp graph <file> [--format svg|ascii]      draw a hatchery as a Mermaid flowchart
  hatchery-mcp test [path]...                         run *.test.yaml files against their cassettes
  hatchery-mcp schema                                 print the JSON Schema of hatchery files
  hatchery-mcp convert <file> [-o OUT]                JSON to YAML or YAML to JSON
  hatchery-mcp init [DIR] [--force]                   create a first hatchery folder, print client config
  hatchery-mcp doctor [--dir DIR]                     check Node, API keys, the folder and MCP servers

Run "hatchery-mcp <command> --help" for the options of a command.
Global: -h, --help; -v, --version.

Exit codes: 0 success, 1 run failed, 2 bad command line, 3 invalid hatchery file, 130 cancelled.`;

/** Help text of `schema`, the one command without a module of its own. */
const SCHEMA_HELP = 'Usage: hatchery-mcp schema   prints the JSON Schema of hatchery files';

/** The help text of `command` (the general help without one); an unknown command is a USAGE error. */
async function helpOf(command: string | undefined): Promise<string> {
  if (command === 'run') return (await import('./run.js')).RUN_HELP;
  if (command === 'validate') return (await import('./validate.js')).VALIDATE_HELP;
  if (command === 'graph') return (await import('./graph.js')).GRAPH_HELP;
  if (command === 'serve') return (await import('./serve.js')).SERVE_HELP;
  if (command === 'test') return (await import('./test.js')).TEST_HELP;
  if (command === 'convert') return (await import('./convert.js')).CONVERT_HELP;
  if (command === 'init') return (await import('./init.js')).INIT_HELP;
  if (command === 'doctor') return (await import('./doctor.js')).DOCTOR_HELP;
  if (command === 'schema') return SCHEMA_HELP;
  if (command === undefined || command === 'help' || command.startsWith('-')) return HELP;
  throw new HatcheryError('USAGE', unknownCommand(command));
}

/** Dispatches a command line; resolves to the process exit code. Never throws for user errors. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    switch (first) {
      case 'run':
        return await (await import('./run.js')).runCommand(rest);
      case 'validate':
        return await (await import('./validate.js')).validateCommand(rest);
      case 'graph':
        return await (await import('./graph.js')).graphCommand(rest);
      case 'serve':
        return await (await import('./serve.js')).serveCommand(rest);
      case 'test':
        return await (await import('./test.js')).testCommand(rest);
      case 'convert':
        return await (await import('./convert.js')).convertCommand(rest);
      case 'init':
        return await (await import('./init.js')).initCommand(rest);
      case 'doctor':
        return await (await import('./doctor.js')).doctorCommand(rest);
      case 'schema': {
        // Options are checked like every command's, so a typo is named instead of ignored.
        if (parseArgs(rest, { help: { type: 'boolean', short: 'h' } }, 'schema').values.help) {
          process.stdout.write(`${SCHEMA_HELP}\n`);
          return EXIT.OK;
        }
        const { hatcheryJsonSchema } = await import('../schema/json-schema.js');
        process.stdout.write(`${JSON.stringify(hatcheryJsonSchema(), null, 2)}\n`);
        return EXIT.OK;
      }
      case 'help':
      case '-h':
      case '--help':
        process.stdout.write(`${await helpOf(rest[0])}\n`);
        return EXIT.OK;
      case '-v':
      case '--version':
        process.stdout.write(`${packageVersion()}\n`);
        return EXIT.OK;
      default:
        if (first === undefined || first.startsWith('-')) {
          return await (await import('./serve.js')).serveCommand(argv);
        }
        throw new HatcheryError('USAGE', unknownCommand(first));
    }
  } catch (err) {
    process.stderr.write(`${err instanceof ValidationError ? err.message : `error: ${formatError(err)}`}\n`);
    if (err instanceof ValidationError) return EXIT.INVALID;
    if (err instanceof HatcheryError && err.code === 'USAGE') return EXIT.USAGE;
    return EXIT.RUN_FAILED;
  }
}
