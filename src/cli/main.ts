import { formatError, HatcheryError, ValidationError } from '../core/errors.js';
import { packageVersion } from '../core/package.js';
import { nearest, quote } from '../schema/suggest.js';
import { EXIT, helpPointer, parseCommand } from './args.js';
import { printErr, printOut } from './print.js';

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
  hatchery-mcp runs list|show|resume|cancel [ID]      list, inspect, resume or cancel past runs
  hatchery-mcp studio [--dir hatchery] [--port N]     a local web page: graphs, runs, timelines

Run "hatchery-mcp <command> --help" for the options of a command.
Global: -h, --help; -v, --version.

Exit codes: 0 success, 1 run failed, 2 bad command line, 3 invalid hatchery file,
4 waiting for input (answer with runs resume), 5 budget exhausted, 130 interrupted or cancelled.`;

/** Help text of `schema`, the one command without a module of its own. */
const SCHEMA_HELP = 'Usage: hatchery-mcp schema   prints the JSON Schema of hatchery files';

/** What a command module gives main: its entry point and its help text. */
interface CommandModule {
  run: (argv: string[]) => Promise<number>;
  help: string;
}

/** Every command with a module of its own, loaded when it is used: one table for dispatch and help. */
const MODULES = {
  serve: () => import('./serve.js').then((m) => ({ run: m.serveCommand, help: m.SERVE_HELP })),
  run: () => import('./run.js').then((m) => ({ run: m.runCommand, help: m.RUN_HELP })),
  validate: () => import('./validate.js').then((m) => ({ run: m.validateCommand, help: m.VALIDATE_HELP })),
  test: () => import('./test.js').then((m) => ({ run: m.testCommand, help: m.TEST_HELP })),
  graph: () => import('./graph.js').then((m) => ({ run: m.graphCommand, help: m.GRAPH_HELP })),
  convert: () => import('./convert.js').then((m) => ({ run: m.convertCommand, help: m.CONVERT_HELP })),
  init: () => import('./init.js').then((m) => ({ run: m.initCommand, help: m.INIT_HELP })),
  doctor: () => import('./doctor.js').then((m) => ({ run: m.doctorCommand, help: m.DOCTOR_HELP })),
  runs: () => import('./runs.js').then((m) => ({ run: m.runsCommand, help: m.RUNS_HELP })),
  studio: () => import('./studio.js').then((m) => ({ run: m.studioCommand, help: m.STUDIO_HELP })),
} satisfies Record<string, () => Promise<CommandModule>>;

/**
 * Every command name of the CLI, for "did you mean" on an unknown command: the modules', `schema`,
 * and `help`, listed so "hepl" finds it; serve is also what runs with no command.
 */
export const COMMANDS = [...Object.keys(MODULES), 'schema', 'help'];

/** One line for an unknown command, with the nearest command name. */
function unknownCommand(word: string): string {
  const near = nearest(word, COMMANDS);
  const file = /\.(json|ya?ml)$/i.test(word) ? `; to run a file, write "hatchery-mcp run ${word}"` : '';
  return `unknown command ${quote(word)}${near ? `; did you mean ${quote(near)}?` : file}\n${helpPointer()}`;
}

/** The module of `word` when it names one (own keys only: "constructor" is no command). */
function moduleOf(word: string | undefined): (() => Promise<CommandModule>) | undefined {
  return word !== undefined && Object.hasOwn(MODULES, word)
    ? MODULES[word as keyof typeof MODULES]
    : undefined;
}

/** The help text of `command` (the general help without one); an unknown command is a USAGE error. */
async function helpOf(command: string | undefined): Promise<string> {
  const load = moduleOf(command);
  if (load) return (await load()).help;
  if (command === 'schema') return SCHEMA_HELP;
  if (command === undefined || command === 'help' || command.startsWith('-')) return HELP;
  throw new HatcheryError('USAGE', unknownCommand(command));
}

/** Dispatches a command line; resolves to the process exit code. Never throws for user errors. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    const load = moduleOf(first);
    if (load) return await (await load()).run(rest);
    switch (first) {
      case 'schema': {
        // Options are checked like every command's, so a typo is named instead of ignored.
        if (!parseCommand(rest, 'schema', SCHEMA_HELP, {})) return EXIT.OK;
        const { hatcheryJsonSchema } = await import('../schema/json-schema.js');
        printOut(`${JSON.stringify(hatcheryJsonSchema(), null, 2)}\n`);
        return EXIT.OK;
      }
      case 'help':
      case '-h':
      case '--help':
        printOut(`${await helpOf(rest[0])}\n`);
        return EXIT.OK;
      case '-v':
      case '--version':
        printOut(`${packageVersion()}\n`);
        return EXIT.OK;
      default:
        if (first === undefined || first.startsWith('-')) return await (await MODULES.serve()).run(argv);
        throw new HatcheryError('USAGE', unknownCommand(first));
    }
  } catch (err) {
    printErr(`${err instanceof ValidationError ? err.message : `error: ${formatError(err)}`}\n`);
    if (err instanceof ValidationError) return EXIT.INVALID;
    if (err instanceof HatcheryError && err.code === 'USAGE') return EXIT.USAGE;
    return EXIT.RUN_FAILED;
  }
}
