import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import { packageVersion } from '../core/package.js';
import { HatcheryMcpServer } from '../mcp/server.js';
import { GuardedStdioServerTransport } from '../mcp/stdio.js';
import { VENDORS } from '../providers/vendors.js';
import { bytesOption, EXIT, intOption, noArguments, parseCommand, secondsOption } from './args.js';
import { printErr, printOut } from './print.js';
import {
  JOURNAL_FLAGS,
  journalOptions,
  journalStore,
  RUNTIME_FLAGS,
  RUNTIME_HELP,
  runtimeOptions,
  STORE_HELP,
} from './runtime-flags.js';
import { shutdownRequested } from './shutdown.js';

/** Help text of the MCP server command. */
export const SERVE_HELP = `Usage: hatchery-mcp [serve] [--dir DIR] [options]

Serves every hatchery (*.json, *.yaml, *.yml, searched recursively) in DIR as an MCP tool, over stdio
by default. Files are watched: adding, editing or deleting one updates the tools.

Options:
  --dir DIR           folder of hatchery files (default ./hatchery)
  --http [HOST:]PORT  serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
                      (HOST defaults to 127.0.0.1; PORT 0 picks a free port)
  --token TOKEN       with --http: demand "Authorization: Bearer TOKEN"
                      (default: the HATCHERY_MCP_TOKEN environment variable)
                      Required unless HOST is 127.0.0.1, ::1 or localhost
  --a2a               with --http: also serve every hatchery as an Agent2Agent (A2A) agent on
                      the same port: the folder at /a2a (card /.well-known/agent-card.json),
                      each hatchery at /a2a/NAME; same token and checks as /mcp
  --a2a-only          with --http: serve A2A only (as --a2a), and no MCP at /mcp
  --insecure-no-token
                      with --http: serve another HOST (0.0.0.0, a LAN address) without a
                      token anyway; anyone who reaches the port can run your hatcheries
  --public-host NAME  with --http: also accept requests whose Host header is NAME, the name
                      clients use to reach a load balancer or proxy in front (repeatable;
                      other names get HTTP 403, against DNS rebinding)
  --max-concurrent N  run at most N hatcheries at once; further calls wait their turn
                      (with --store: across all replicas)
  --max-result-bytes N
                      cut tool results longer than N bytes (default 1048576, at least
                      1024); the full output stays readable as hatchery-output://
                      resources (see --output-ttl)
  --max-inline-bytes N
                      results larger than N bytes (default 51200) give a summary and a
                      resource_link to a hatchery-output:// resource with the full output
  --output-ttl SECONDS
                      keep those resources SECONDS (default 3600; the latest 20 and
                      256 MiB in all at most)
  --max-sessions N    with --http: keep at most N sessions (default 1000); the oldest
                      idle one is closed for a new one, and when all are busy new
                      clients get HTTP 503
  --max-body BYTES    with --http: largest request body (default 4MiB; units KiB, MiB,
                      GiB); a larger one gets HTTP 413
  --sync-wait SECONDS
                      answer a hatchery tool call within SECONDS (default 50, under the
                      60 s many clients allow a call): a run still going then goes on
                      in the background and the call returns its run id for
                      hatchery_result; 0 waits for every run to end
  --no-generic-tools  hide hatchery_list, hatchery_run, hatchery_start, hatchery_status,
                      hatchery_result, hatchery_cancel, hatchery_runs, hatchery_resume
                      and hatchery_respond
  --state DIR         keep run journals in DIR (default: $HATCHERY_STATE, else
                      .hatchery/runs beside the served folder, never inside it)
  --no-journal        keep no journal of runs
  --keep-runs N       keep the newest N runs in the state folder (default 1000)
  --keep-days N       delete finished runs older than N days (default 30)
${STORE_HELP}
  --resume-interrupted
                      resume background runs that a stop of the server interrupted
                      (they are always marked "interrupted" in the run journal at start;
                      with --store a stop hands its runs to the other replicas instead)
  --list-all-runs     hatchery_runs lists every run of the served files to every client
                      (default: only the runs the asking session started); use it for
                      one trusted client, or to find runs from before a restart
  --task-wait SECONDS
                      a tool call from a client with the MCP tasks extension becomes a
                      task when its run takes longer than this (default 10; 0: always)
${RUNTIME_HELP}
  -h, --help          show this help
  -v, --version       print the version

Models: set ${VENDORS.map((v) => v.keyVar).join(' and/or ')} (and HATCHERY_MODEL) in the client's
"env" for the server; without a key, drones use the client's own model when it supports
MCP sampling. In stdio mode, stdout carries only MCP messages; logs go to stderr.
See docs/serving.md for client configuration, the generic tools and long runs.`;

/** Parses `--http [host:]port`. */
export function parseHttpAddress(value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]:|([^:[\]]+):)?(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) {
    throw new HatcheryError(
      'USAGE',
      `--http expects [host:]port (e.g. 3000, 127.0.0.1:3000 or [::1]:3000), got "${value}"`,
    );
  }
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

/**
 * True when a person started the stdio server from a terminal: stdin and stderr are both a TTY. An
 * MCP client always gives stdin as a pipe, so it never sees the note (and stdout stays the protocol's).
 */
export function shouldWelcome(http: boolean, stdinIsTty: boolean, stderrIsTty: boolean): boolean {
  return !http && stdinIsTty && stderrIsTty;
}

/** The note for a person who typed `hatchery-mcp` in a terminal: what this is and what to do instead. */
export function welcomeText(dir: string, hatcheries: number): string {
  return `hatchery-mcp ${packageVersion()}: an MCP server, waiting for an MCP client on stdin (stdio).
Serving ${hatcheries} hatcher${hatcheries === 1 ? 'y' : 'ies'} as tools from ${path.resolve(dir)}.
Press Ctrl-C to stop. An MCP client (Claude Desktop, VS Code, Cursor, Claude Code) starts this
itself: run "hatchery-mcp init" for a first folder and the config block of each client, or
"hatchery-mcp run <file>" to run one hatchery here, "hatchery-mcp --help" for everything else.
`;
}

/** The options that mean something only with --http, and why stdio has no use for them. */
const HTTP_ONLY = [
  ['token', 'stdio needs no token'],
  ['insecure-no-token', 'stdio has no network'],
  ['max-sessions', 'stdio has one session'],
  ['max-body', 'stdio has its own 10 MiB message limit'],
  ['public-host', 'stdio has no Host header'],
  ['a2a', 'A2A is served over HTTP, on the port of --http; add --http [HOST:]PORT'],
  ['a2a-only', 'A2A is served over HTTP, on the port of --http; add --http [HOST:]PORT'],
] as const;

/** Sends console output to stderr: in stdio mode stdout belongs to the protocol (js: tools may log). */
function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/** Starts the MCP server (stdio or HTTP); resolves with the exit code on shutdown. */
export async function serveCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'serve', SERVE_HELP, {
    dir: { type: 'string', short: 'd' },
    http: { type: 'string' },
    token: { type: 'string' },
    'insecure-no-token': { type: 'boolean' },
    a2a: { type: 'boolean' },
    'a2a-only': { type: 'boolean' },
    'public-host': { type: 'string', multiple: true },
    'max-concurrent': { type: 'string' },
    'max-result-bytes': { type: 'string' },
    'max-inline-bytes': { type: 'string' },
    'output-ttl': { type: 'string' },
    'max-sessions': { type: 'string' },
    'max-body': { type: 'string' },
    'sync-wait': { type: 'string' },
    'no-generic-tools': { type: 'boolean' },
    'resume-interrupted': { type: 'boolean' },
    'list-all-runs': { type: 'boolean' },
    'task-wait': { type: 'string' },
    ...RUNTIME_FLAGS,
    ...JOURNAL_FLAGS,
    version: { type: 'boolean', short: 'v' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  if (values.version) {
    printOut(`${packageVersion()}\n`);
    return EXIT.OK;
  }
  noArguments(positionals, `\n\n${SERVE_HELP}`);
  const http = values.http === undefined ? undefined : parseHttpAddress(values.http);
  const httpOnly = !http && HTTP_ONLY.find(([flag]) => values[flag] !== undefined);
  if (httpOnly)
    throw new HatcheryError('USAGE', `--${httpOnly[0]} only applies with --http (${httpOnly[1]})`);
  const token = http ? values.token || process.env.HATCHERY_MCP_TOKEN || undefined : undefined;
  const insecureNoToken = values['insecure-no-token'] === true;
  // Checked before anything starts: a refused address must never listen, nor resume a run.
  const open = http && (await import('../mcp/http-guard.js')).openBindProblem(http.host, http.port, token);
  if (open && !insecureNoToken) throw new HatcheryError('USAGE', open);
  if (open) {
    process.stderr.write(
      `WARNING: --insecure-no-token: serving MCP over HTTP on ${http.host} without a token. Anyone who can reach this port can run every hatchery served here, and their tools (files, programs, network). Pass --token TOKEN unless a proxy in front checks who calls.\n`,
    );
  }
  for (const name of values['public-host'] ?? []) {
    if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/i.test(name)) {
      throw new HatcheryError(
        'USAGE',
        `--public-host ${JSON.stringify(name)}: give a host name only (mcp.example.com, or [::1] for an IPv6 address), without scheme, port or path`,
      );
    }
  }
  const outputTtl = intOption(values['output-ttl'], 'output-ttl');
  const maxSessions = intOption(values['max-sessions'], 'max-sessions');
  const maxBodyBytes = bytesOption(values['max-body'], 'max-body');
  if (!http) keepStdoutForProtocol();
  const dir = values.dir ?? 'hatchery';

  // The run journal's modules are imported with the runtime, after the first tools/list answer; its
  // options are checked now, so a wrong one still stops the start.
  const noJournal = values['no-journal'] === true;
  if (noJournal) await journalStore(values, dir);
  intOption(values['keep-runs'], 'keep-runs');
  intOption(values['keep-days'], 'keep-days');
  const options = await runtimeOptions(values);
  const core = await HatcheryMcpServer.start({
    dir,
    runtimeOptions: options,
    ...(noJournal ? {} : { openStore: () => journalOptions(values, dir, token ? [token] : [], true) }),
    mcpServers: options.tools?.mcpServers,
    // The first tools/list comes before the files are compiled: a fast start (issue 15).
    deferLoad: true,
    genericTools: values['no-generic-tools'] !== true,
    maxConcurrent: intOption(values['max-concurrent'], 'max-concurrent'),
    maxResultBytes: intOption(values['max-result-bytes'], 'max-result-bytes'),
    maxInlineBytes: intOption(values['max-inline-bytes'], 'max-inline-bytes'),
    ...(outputTtl === undefined ? {} : { outputs: { maxAgeMs: outputTtl * 1000 } }),
    syncWaitMs: secondsOption(values['sync-wait'], 'sync-wait'),
    secrets: token ? [token] : [],
    resumeInterrupted: values['resume-interrupted'] === true,
    listAllRuns: values['list-all-runs'] === true,
    taskWaitMs: secondsOption(values['task-wait'], 'task-wait'),
  });
  const shutdown = shutdownRequested(!http);
  let closeHttp: (() => Promise<void>) | undefined;
  try {
    if (http) {
      // Imported only for --http: the HTTP stack (hono, the node adapter) is not on the stdio path.
      const { serveHttp } = await import('../mcp/http.js');
      const handle = await serveHttp(core, {
        host: http.host,
        port: http.port,
        token,
        insecureNoToken,
        maxSessions,
        maxBodyBytes,
        allowedHosts: values['public-host'],
        a2a: values.a2a === true || values['a2a-only'] === true,
        mcp: values['a2a-only'] !== true,
      });
      closeHttp = handle.close;
      core.log('info', `listening on ${handle.url}${token ? ' (bearer token required)' : ''}`);
      if (handle.a2aUrl) {
        const card = new URL('/.well-known/agent-card.json', handle.a2aUrl).href;
        core.log(
          'info',
          `A2A agent at ${handle.a2aUrl} (agent card ${card}; each hatchery at ${handle.a2aUrl}/NAME)`,
        );
      }
    } else {
      core.serveStdio(new GuardedStdioServerTransport());
      if (shouldWelcome(false, process.stdin.isTTY === true, process.stderr.isTTY === true))
        printErr(welcomeText(dir, core.registry.listed().length));
    }
    const why = await shutdown.done;
    core.log('info', `shutting down (${why})`);
  } finally {
    shutdown.dispose();
    await core.close();
    await closeHttp?.();
    // An open stdin pipe would keep the process alive after a signal.
    if (!http) process.stdin.destroy();
  }
  // Whatever a tool left open (a child process, a socket) must not keep a stopped server alive.
  setTimeout(() => process.exit(process.exitCode ?? EXIT.OK), 3_000).unref();
  return EXIT.OK;
}
