import { HatcheryError } from '../core/errors.js';
import { Runtime } from '../runtime/runtime.js';
import { startStudio } from '../studio/server.js';
import { EXIT, noArguments, parseCommand } from './args.js';
import { printErr, printOut } from './print.js';
import {
  JOURNAL_FLAGS,
  journalOptions,
  RUNTIME_FLAGS,
  RUNTIME_HELP,
  runtimeOptions,
  STORE_HELP,
} from './runtime-flags.js';
import { shutdownRequested } from './shutdown.js';

/** Help text of `hatchery-mcp studio`. */
export const STUDIO_HELP = `Usage: hatchery-mcp studio [--dir DIR] [options]

Serves a local web page to look at and run the hatcheries of DIR: their graphs (redrawn when a file
changes) and validation problems, a form to run one with the run drawn live on its graph, and past
runs from the run journal (timeline, prompts, outputs, tool calls) with resume, cancel and answer.
It listens on 127.0.0.1 only and prints the page's URL with a random token; keep it to yourself.
Runs started on the page run like "hatchery-mcp run" runs them, with the options below.

Options:
  --dir DIR           folder of hatchery files (default ./hatchery)
  --port PORT         port on 127.0.0.1 (default 0: a free port)
  --state DIR         keep run journals in DIR (default: $HATCHERY_STATE, else
                      .hatchery/runs beside the folder)
  --no-journal        keep no journal (no past runs, no resume)
  --keep-runs N       keep the newest N runs in the state folder (default 1000)
  --keep-days N       delete finished runs older than N days (default 30)
${STORE_HELP}
${RUNTIME_HELP}
  -h, --help          show this help

Stop it with Ctrl-C: runs still going are cancelled (resume them later from the journal).
See docs/studio.md.`;

/** Parses `--port`: 0 to 65535. */
function portOption(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!/^\d{1,5}$/.test(value) || n > 65535)
    throw new HatcheryError('USAGE', `--port must be a port number from 0 to 65535, got "${value}"`);
  return n;
}

/** `hatchery-mcp studio`: serves the page until SIGINT/SIGTERM; returns the exit code. */
export async function studioCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'studio', STUDIO_HELP, {
    dir: { type: 'string', short: 'd' },
    port: { type: 'string' },
    ...RUNTIME_FLAGS,
    ...JOURNAL_FLAGS,
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  noArguments(positionals);
  const port = portOption(values.port);
  const dir = values.dir ?? 'hatchery';
  const { stat } = await import('node:fs/promises');
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir)
    throw new HatcheryError(
      'USAGE',
      `--dir ${dir}: no such folder; create one with: hatchery-mcp init ${dir}, or point --dir at your hatchery files`,
    );
  const runtime = new Runtime({
    ...(await runtimeOptions(values)),
    ...(await journalOptions(values, dir)),
  });
  const stop = shutdownRequested(false);
  try {
    const studio = await startStudio({ dir, runtime, port });
    printOut(`studio: ${studio.url}\n`);
    const why = await stop.done;
    printErr(`studio: stopping (${why})\n`);
    await studio.close();
  } finally {
    stop.dispose();
    await runtime.close();
  }
  // Whatever a tool left open (a child process, a socket) must not keep a stopped studio alive.
  setTimeout(() => process.exit(process.exitCode ?? EXIT.OK), 3_000).unref();
  return EXIT.OK;
}
