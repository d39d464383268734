import { setMaxListeners } from 'node:events';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Server, Tool, Transport } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio } from '@modelcontextprotocol/server/stdio';
import { waitAtMost } from '../core/cancel.js';
import { formatError, HatcheryError } from '../core/errors.js';
import { secretRedactor } from '../core/secrets.js';
import { packageVersion } from '../core/version.js';
import type { RunStore } from '../runtime/journal/store.js';
import type { Runtime, RuntimeOptions } from '../runtime/runtime.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { TASK_SOURCE } from './ext-tasks/schemas.js';
import { DEFAULT_SYNC_WAIT_MS, GENERIC_TOOL_NAMES } from './generic-defs.js';
import type { ServerHost } from './host.js';
import { Limiter } from './limiter.js';
import { OutboundGuard } from './outbound.js';
import { OutputStore, type OutputStoreOptions } from './outputs.js';
import { DEFAULT_HEARTBEAT_MS } from './progress.js';
import { changedTools, HatcheryRegistry, type RegistryChange } from './registry.js';
import { RunRegistry, type RunRegistryOptions } from './runs.js';
import { createSession, loadCallHandling, type Session } from './session.js';
import { HatcheryWatcher } from './watcher.js';

/** Options of the hatchery MCP server. */
export interface HatcheryServerOptions {
  /** Folder of hatchery files, searched recursively. */
  dir: string;
  /** A runtime to use; by default one is built from `runtimeOptions` (and closed with the server). */
  runtime?: Runtime;
  /** Options of the runtime built when `runtime` is not given. */
  runtimeOptions?: RuntimeOptions;
  /**
   * Opens the run journal of the runtime built when `runtime` is not given, in place of
   * `runtimeOptions.store`: called when the runtime is built (after the first answer of a deferred
   * start), so its modules are not imported before.
   */
  openStore?: () => Promise<RunStore | undefined>;
  /** MCP servers from --mcp-config, for mcp: tool references of the files. */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
  /** Offer hatchery_list/run/start/status/result/cancel (default true). */
  genericTools?: boolean;
  /** Runs executing at once; further calls wait (default unlimited). */
  maxConcurrent?: number;
  /**
   * Answer the first tools/list before compiling the files (default false; `serve` sets it): each
   * file is listed once parsed and validated, and compiled and analysed on its first use or in the
   * background after that answer. A file that fails then is withdrawn (list_changed) and its error
   * logged; a call to it gets that error. Files broken at parse or schema level are never listed.
   */
  deferLoad?: boolean;
  /** Watch the folder and reload changed files (default true). */
  watch?: boolean;
  /** Quiet time after a file event before reloading, in milliseconds (default 100, at least 60). */
  debounceMs?: number;
  /** Interval of heartbeat progress notifications, in milliseconds (default 5000). */
  heartbeatMs?: number;
  /**
   * Longest time a hatchery tool call is answered in, in milliseconds (default 50 000, under the
   * common 60 s client timeout); a run still going is handed off and the call returns its run id.
   * 0 waits for every run to end. Needs the generic tools (hatchery_result) to be useful.
   */
  syncWaitMs?: number;
  /** How many finished background runs are kept, and for how long. */
  runs?: RunRegistryOptions;
  /** Offer the tasks extension (io.modelcontextprotocol/tasks) to 2026-era clients (default true). */
  tasks?: boolean;
  /**
   * How long a tools/call from a client that declares the tasks extension waits for its run before
   * answering with a task, in milliseconds (default 10 000; 0: always a task).
   */
  taskWaitMs?: number;
  /** Writes one log line (default: stderr, never stdout). */
  log?: (line: string) => void;
  /** Secrets besides the environment's API keys that must never appear in logs or results. */
  secrets?: readonly string[];
  /**
   * Largest text of one tool result, in bytes (default 1 MiB); a longer output is cut, and kept in
   * full as `hatchery-output://` resources for a while.
   */
  maxResultBytes?: number;
  /** Largest tool, input or resource description sent, in bytes (default 4 KiB). */
  maxDescBytes?: number;
  /**
   * Largest result sent inline, in bytes (default 50 KiB); a larger output becomes a
   * `hatchery-output://` resource, and the result a summary with a resource_link.
   */
  maxInlineBytes?: number;
  /** How long, how many and how many bytes of such outputs are kept (default one hour, 20, 256 MiB). */
  outputs?: OutputStoreOptions;
  /**
   * Resume the background runs of served hatcheries that a stop of the server interrupted (they are
   * marked `interrupted` in the journal at start either way).
   */
  resumeInterrupted?: boolean;
}

/** Default wait of a tools/call before it becomes a task (tasks extension), in ms. */
export const DEFAULT_TASK_WAIT_MS = 10_000;

/** Log levels used by the server (MCP logging levels). */
export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

/** Margin under the load's start time from which a file's modification time counts as an edit. */
const MTIME_MARGIN_MS = 50;

/** Longest wait for a first tools/list before the folder is watched anyway, in milliseconds. */
const WATCH_DELAY_MS = 300;

/** CPU time given to deferred loads per event-loop turn, in milliseconds (see settleInBackground). */
const SETTLE_SLICE_MS = 8;

/** Longest tool description quoted in the server instructions. */
const INSTRUCTION_DESC_LIMIT = 200;
/** Most tools listed by name in the server instructions. */
const INSTRUCTION_TOOL_LIMIT = 50;

/**
 * Serves every hatchery of a folder as an MCP tool. One shared registry feeds any number of sessions
 * (one for stdio, one per HTTP client); files are watched and reloaded; runs never share a ctx.
 */
export class HatcheryMcpServer implements ServerHost {
  readonly registry: HatcheryRegistry;
  readonly limiter: Limiter;
  readonly runs: RunRegistry;
  readonly tasks: boolean;
  readonly taskWaitMs: number;
  readonly redact: (text: string) => string;
  /** Redacts and caps everything sent to clients. */
  readonly out: OutboundGuard;
  /** Full outputs of results cut to the size limit, served as resources. */
  readonly outputs: OutputStore;
  readonly heartbeatMs: number;
  readonly genericTools: boolean;
  readonly syncWaitMs: number | undefined;
  readonly version = packageVersion();
  private readonly sessions = new Set<Session>();
  private readonly stdio = new Set<StdioServerHandle>();
  private readonly listChanged = new Set<() => void>();
  private inflight = 0;
  private drained: (() => void) | undefined;
  private readonly shutdown = new AbortController();
  private readonly ownsRuntime: boolean;
  private readonly writeLine: (line: string) => void;
  private watcher: HatcheryWatcher | undefined;
  private closing: Promise<void> | undefined;
  private listed: { from: Tool[]; tools: Tool[] } | undefined;
  /** Starts the file watcher, until it is started (see start). */
  private startWatching: (() => void) | undefined;
  /** True once the first tools/list started the warm-up (see warmUp). */
  private warmed = false;
  /** True once deferred loads are being completed in the background (see settleInBackground). */
  private settling = false;
  /** The runtime, once built (see runtime). */
  private built: Runtime | undefined;
  private building: Promise<void> | undefined;
  private readying: Promise<void> | undefined;
  /** The environment of runs (the runtime's): secrets to redact, API keys to warm up for. */
  private readonly env: Readonly<Record<string, string | undefined>>;

  private constructor(readonly options: HatcheryServerOptions) {
    this.ownsRuntime = !options.runtime;
    this.registry = new HatcheryRegistry(options.dir, {
      reserved: options.genericTools === false ? undefined : GENERIC_TOOL_NAMES,
    });
    this.registry.onSettled = (change) => this.announce(change);
    if (options.runtime) this.adopt(options.runtime);
    this.limiter = new Limiter(options.maxConcurrent);
    this.runs = new RunRegistry(options.runs);
    // What the runtime will hold, known before it is built: its store and environment.
    const store = options.runtime
      ? options.runtime.store
      : (options.runtimeOptions?.store ?? options.openStore);
    this.tasks = options.tasks !== false && store !== undefined;
    this.taskWaitMs = options.taskWaitMs ?? DEFAULT_TASK_WAIT_MS;
    this.env = options.runtime?.env ?? options.runtimeOptions?.env ?? process.env;
    this.redact = secretRedactor(this.env, options.secrets);
    this.outputs = new OutputStore(options.outputs);
    this.out = new OutboundGuard(
      this.redact,
      {
        maxResultBytes: options.maxResultBytes,
        maxDescBytes: options.maxDescBytes,
        maxInlineBytes: options.maxInlineBytes,
      },
      this.outputs,
    );
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.genericTools = options.genericTools !== false;
    const wait = options.syncWaitMs ?? DEFAULT_SYNC_WAIT_MS;
    this.syncWaitMs = this.genericTools && wait > 0 ? wait : undefined;
    this.writeLine = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    // Every background run listens to the shutdown signal; hundreds at once are normal, not a leak.
    setMaxListeners(0, this.shutdown.signal);
  }

  /** The runtime runs go through; built by ready() (at start, unless the load is deferred). */
  get runtime(): Runtime {
    if (!this.built)
      throw new HatcheryError('INTERNAL', 'the runtime is used before it is built (see ready)');
    return this.built;
  }

  /** Takes a runtime as the server's: the registry loads with its options, runs may not plant a tool. */
  private adopt(runtime: Runtime): void {
    this.built = runtime;
    // The folder's files and their hatch: sub-files load with the same options.
    // The runtime's roots come along, so constant paths outside them are load errors here too.
    this.registry.setLoadOptions({
      ...runtime.loadOptions,
      mcpServers: runtime.loadOptions.mcpServers ?? this.options.mcpServers,
    });
    // No run may plant a tool: the served folder, its hatchery files and their dependencies are off limits.
    runtime.protectServed(this.registry.dir, () => this.registry.dependencies(true));
    // A js: module edited past its reload limit keeps its last version: say so to the user.
    runtime.tools.js.onNotice ??= (message) => this.log('warning', message);
  }

  /** Builds the runtime (its module imported then) and imports the loader's compiling half; once. */
  private buildRuntime(): Promise<void> {
    this.building ??= (async () => {
      const loading = this.registry.ready();
      if (!this.built) {
        const [{ Runtime }, store] = await Promise.all([
          import('../runtime/runtime.js'),
          this.options.openStore?.(),
        ]);
        const options = store ? { ...this.options.runtimeOptions, store } : this.options.runtimeOptions;
        if (!this.built) this.adopt(new Runtime(withMcpServers(options, this.options.mcpServers)));
      }
      await loading;
    })();
    return this.building;
  }

  /**
   * Resolves once the server can run and compile: the runtime built, the loader's compiling half
   * imported, and the runs that a stop interrupted recovered from the journal. A deferred start
   * does this right after its first tools/list answer; calls and tasks requests wait for it.
   */
  ready(): Promise<void> {
    this.readying ??= this.buildRuntime().then(() => this.recoverRuns());
    return this.readying;
  }

  /** Loads the folder (reporting broken files), starts watching it, and returns the server. */
  static async start(options: HatcheryServerOptions): Promise<HatcheryMcpServer> {
    const dir = path.resolve(options.dir);
    let isDir = false;
    try {
      isDir = (await stat(dir)).isDirectory();
    } catch {
      // Reported below.
    }
    if (!isDir) {
      throw new HatcheryError(
        'USAGE',
        `--dir ${options.dir}: no such folder; create one with a first hatchery: hatchery-mcp init ${options.dir}, or point --dir at your hatchery files`,
      );
    }
    const server = new HatcheryMcpServer({ ...options, dir });
    // Kernel file times lag Date.now() by up to a clock tick: a margin, since a write after it is caught.
    const since = Date.now() - MTIME_MARGIN_MS;
    if (!options.deferLoad) await server.buildRuntime();
    const change = await server.registry.loadAll({ defer: options.deferLoad });
    for (const p of change.problems) server.log('error', p);
    const names = server.registry.listed().map((e) => e.name);
    server.log(
      'info',
      `serving ${names.length} hatcher${names.length === 1 ? 'y' : 'ies'} from ${dir}${names.length ? `: ${names.join(', ')}` : ''}`,
    );
    // A deferred start builds the runtime, compiles and recovers runs after its first answer, or
    // after a short while without one; calls wait for it.
    if (!options.deferLoad) await server.ready();
    else setTimeout(() => server.warmUp(), WATCH_DELAY_MS).unref();
    if (options.watch !== false) {
      const watcher = new HatcheryWatcher(dir, {
        debounceMs: options.debounceMs,
        onChange: async (paths) => {
          await server.reload(paths);
        },
        onError: (err) => server.log('warning', `file watcher: ${err.message}`),
      });
      // Not awaited: chokidar's scan (about 140 ms at 1,000 files) and what follows it start once the
      // first tools/list is answered (or after a short while without one), so they never delay it;
      // what changed between the load and the scan is queued once it is done (CatchUp).
      const registry = server.registry;
      server.startWatching = () => {
        server.startWatching = undefined;
        clearTimeout(timer);
        watcher
          .start({
            since,
            known: () => [...registry.loadedFiles(), ...registry.dependencies()],
            list: () => registry.listFiles(),
            unchanged: async (file) => {
              const text = registry.loadedText(file);
              return text !== undefined && (await readFile(file, 'utf8').catch(() => undefined)) === text;
            },
          })
          .catch((err: unknown) => server.log('warning', `file watcher: ${formatError(err)}`));
      };
      const timer = setTimeout(() => server.startWatching?.(), WATCH_DELAY_MS);
      // A server closed before then exits at once: the watcher would not start after close anyway.
      timer.unref();
      watcher.watchFiles(registry.dependencies());
      server.watcher = watcher;
    }
    return server;
  }

  /**
   * Marks the journal's runs whose process is gone as interrupted, and resumes the background runs of
   * served files among them when the server was started with resumeInterrupted. A journal that
   * cannot be read is a warning: serving goes on.
   */
  private async recoverRuns(): Promise<void> {
    const store = this.runtime.store;
    if (!store) return;
    let claimed: Awaited<ReturnType<typeof store.claimInterrupted>>;
    try {
      claimed = await store.claimInterrupted();
    } catch (err) {
      this.log('warning', `run journal ${store.location}: ${formatError(err)}`);
      return;
    }
    const { resumeRun } = claimed.length > 0 ? await import('./background.js') : { resumeRun: undefined };
    for (const run of claimed) {
      const entry = this.registry.get(run.hatchery);
      const served = entry !== undefined && entry.file === run.file;
      const background = run.source === 'background' || run.source === TASK_SOURCE;
      const resume = this.options.resumeInterrupted === true && served && background;
      const at = run.node ? ` at node "${run.node}"` : '';
      this.log(
        'info',
        `run ${run.id} of ${run.hatchery} was interrupted${at}; ${resume ? 'resuming it' : 'hatchery_resume (or hatchery-mcp runs resume) continues it'}`,
      );
      if (!resume || !resumeRun) continue;
      try {
        const attempt = await this.runtime.prepareResume(run.id);
        const r = resumeRun(
          this,
          run.id,
          attempt,
          { hatchery: run.hatchery, file: run.file, source: run.source },
          undefined,
        );
        r.note = `interrupted${at} when the server stopped, and resumed when it started again (--resume-interrupted); the nodes that had finished were taken from the run journal`;
      } catch (err) {
        this.log('warning', `run ${run.id} of ${run.hatchery} cannot be resumed: ${formatError(err)}`);
      }
    }
  }

  /** Aborts when the server shuts down; background runs are linked to it (calls end with their session). */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** A new MCP session (a low-level SDK Server) fed from the shared registry; connect it to one transport. */
  createSession(): Session {
    const session = createSession(this);
    this.sessions.add(session);
    // Transport troubles (a skipped oversized message, a write that failed) end one message, not the server.
    session.server.onerror = (err) => this.writeLine(`hatchery-mcp: warning: ${this.out.text(err.message)}`);
    const prev = session.server.onclose;
    session.server.onclose = () => {
      this.sessions.delete(session);
      prev?.();
    };
    return session;
  }

  /**
   * Serves one stdio connection over `transport`, in whichever protocol era its opening message
   * selects (2025-11-25 `initialize`, or the 2026-07-28 per-request envelope).
   */
  serveStdio(transport: Transport): StdioServerHandle {
    const handle = serveStdio(() => this.createSession().server, {
      transport,
      onerror: (err) => this.writeLine(`hatchery-mcp: warning: ${this.out.text(err.message)}`),
    });
    this.stdio.add(handle);
    return handle;
  }

  /** Creates a session and connects it to a transport (in-memory, a legacy HTTP session...). */
  async connect(transport: Transport): Promise<Server> {
    const session = this.createSession();
    await session.server.connect(transport);
    return session.server;
  }

  /** Counts a run as in flight (shutdown waits for it to end). */
  runStarted(): void {
    this.inflight++;
  }

  /** Counts a run as ended. */
  runEnded(): void {
    if (--this.inflight === 0) this.drained?.();
  }

  /** Sessions connected now. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** The hatchery tools as sent: descriptions redacted and capped (computed once per change). */
  tools(): Tool[] {
    // After this answer is sent: the watcher's start-up work waits for the first list.
    if (this.startWatching) setImmediate(() => this.startWatching?.());
    if (!this.warmed) setImmediate(() => this.warmUp());
    const from = this.registry.tools();
    if (this.listed?.from !== from) this.listed = { from, tools: from.map((t) => this.out.tool(t)) };
    return this.listed.tools;
  }

  /**
   * Imports, in the background once the first tools/list is answered, what the first call would
   * otherwise wait for: the sessions' call handling, and the vendor SDK of each API key set (40-80 ms
   * of module loading). Start-up never loads them, so the list comes first; a runtime with its own
   * provider factory needs no SDK.
   */
  private warmUp(): void {
    if (this.closing || this.warmed) return;
    this.warmed = true;
    this.ready().then(
      () => this.settleInBackground(),
      (err: unknown) => this.log('error', `start-up: ${formatError(err)}`),
    );
    // A failure is the first call's own error (it imports again).
    loadCallHandling().catch(() => undefined);
    if (!this.ownsRuntime || this.options.runtimeOptions?.providerFactory) return;
    const env = this.env;
    // A broken install fails the call that needs the SDK, with its own error, as before.
    if (env.OPENAI_API_KEY) import('../providers/openai.js').catch(() => undefined);
    if (env.ANTHROPIC_API_KEY) import('../providers/anthropic.js').catch(() => undefined);
  }

  /**
   * Completes the deferred loads (see deferLoad) a few milliseconds per event-loop turn, so requests
   * are answered in between; a call needing a file still waiting completes that one at once.
   */
  settleInBackground(): void {
    if (this.settling || this.registry.pendingCount === 0) return;
    this.settling = true;
    const step = () => {
      if (this.closing) return;
      if (this.registry.settleSome(SETTLE_SLICE_MS) > 0) setImmediate(step);
      // The files they depend on are known now: watch them, as after a reload.
      else this.watcher?.watchFiles(this.registry.dependencies());
    };
    setImmediate(step);
  }

  /** The server instructions: what the tools are, and how to use the generic ones. */
  instructions(): string {
    const entries = this.registry.listed();
    const lines = [
      `hatchery-mcp runs JSON-defined LLM workflows ("hatcheries") from ${this.registry.dir}. Each hatchery is a tool: pass the text to work on as "input", plus the named inputs its schema lists; the result is the workflow's final output.`,
    ];
    if (entries.length === 0) lines.push('No hatchery is loaded yet.');
    else {
      lines.push('Hatcheries loaded at start:');
      for (const e of entries.slice(0, INSTRUCTION_TOOL_LIMIT)) {
        lines.push(`- ${e.name}: ${this.out.text(e.tool.description ?? '', INSTRUCTION_DESC_LIMIT)}`);
      }
      if (entries.length > INSTRUCTION_TOOL_LIMIT)
        lines.push(`- and ${entries.length - INSTRUCTION_TOOL_LIMIT} more`);
    }
    if (this.genericTools) {
      lines.push(
        'Files are reloaded when they change. hatchery_list shows what is loaded now and hatchery_run runs a hatchery by name, even one added after your tool list was fetched.',
        'Runs can take minutes. If your tool calls time out (often after 60 s), use hatchery_start to get a run id at once, then call hatchery_result with it (it waits up to wait_seconds) until it returns the result; hatchery_status shows progress and hatchery_cancel stops the run.',
        'Runs are journaled: hatchery_runs lists them, hatchery_resume continues one that failed or was interrupted without paying again for the nodes that finished, and hatchery_respond answers a run that waits for input (state input_required).',
      );
    }
    return lines.join('\n');
  }

  /** Logs to stderr and, as an MCP log message, to every connected client. */
  log(level: LogLevel, message: string): void {
    // Capped: a broken file's error must not carry the file (clients drop messages over 10 MiB).
    const text = this.out.text(message);
    this.writeLine(`hatchery-mcp: ${level === 'info' ? '' : `${level}: `}${text}`);
    for (const s of this.sessions) {
      if (!connected(s.server)) continue;
      s.server.sendLoggingMessage({ level, logger: 'hatchery-mcp', data: text }, s.sessionId()).catch(() => {
        // A client that went away needs no log.
      });
    }
  }

  /** Reloads changed paths and tells every client when the tools changed. */
  async reload(paths: string[]): Promise<RegistryChange> {
    // Files compile with the runtime's options (roots, MCP servers).
    await this.buildRuntime();
    const change = await this.registry.refresh(paths);
    this.announce(change);
    return change;
  }

  /** Logs a registry change's errors and tells every client when the tools changed. */
  private announce(change: RegistryChange): void {
    for (const p of change.problems) this.log('error', p);
    if (changedTools(change)) {
      const parts = [
        change.added.length ? `added ${change.added.join(', ')}` : '',
        change.updated.length ? `updated ${change.updated.join(', ')}` : '',
        change.removed.length ? `removed ${change.removed.join(', ')}` : '',
      ].filter(Boolean);
      this.log('info', `reloaded: ${parts.join('; ')}`);
      this.watcher?.watchFiles(this.registry.dependencies());
      for (const s of this.sessions) {
        if (!connected(s.server)) continue;
        try {
          s.server.sendToolListChanged();
          s.server.sendResourceListChanged();
        } catch {
          // Not connected any more.
        }
      }
      for (const fn of this.listChanged) fn();
    }
  }

  /** Calls `fn` whenever the tool list changes (stateless HTTP publishes it to its subscribers); returns the unsubscriber. */
  onListChanged(fn: () => void): () => void {
    this.listChanged.add(fn);
    return () => this.listChanged.delete(fn);
  }

  /** Resolves once pending file changes have been handled (tests, benchmarks). */
  async idle(): Promise<void> {
    this.startWatching?.();
    await this.watcher?.idle();
  }

  /**
   * Shuts down: stops watching, cancels in-flight runs (waiting up to `graceMs` for them to end),
   * closes every session and the MCP client connections of tools.
   */
  close(graceMs = 2_000): Promise<void> {
    this.closing ??= (async () => {
      // A watcher not started yet never starts (start() after close() does nothing).
      await this.watcher?.close();
      this.shutdown.abort(new HatcheryError('ABORTED', 'the server is shutting down'));
      await this.runs.cancelAll(this.shutdown.signal.reason, graceMs);
      // Closing a session aborts the signals of its calls in flight, which cancels their runs.
      await Promise.all([...this.sessions].map((s) => s.server.close().catch(() => undefined)));
      await Promise.all([...this.stdio].map((h) => h.close().catch(() => undefined)));
      this.sessions.clear();
      if (this.inflight > 0) {
        await waitAtMost(
          new Promise<void>((r) => {
            this.drained = r;
          }),
          graceMs,
        );
      }
      // A runtime being built is closed once it is.
      await this.building?.catch(() => undefined);
      if (this.ownsRuntime) await this.built?.close();
    })();
    return this.closing;
  }
}

/**
 * Whether a session has a client to notify: a 2025-era one once `initialize` is done, a 2026-era one
 * (stdio) as soon as its era is pinned; its list changes then go out on `subscriptions/listen`.
 */
function connected(server: Server): boolean {
  return server.getNegotiatedProtocolVersion() !== undefined;
}

/** Runtime options whose tool layer also knows the server's --mcp-config servers. */
function withMcpServers(
  options: RuntimeOptions | undefined,
  mcpServers: Readonly<Record<string, McpServerDef>> | undefined,
): RuntimeOptions | undefined {
  if (!mcpServers || options?.tools?.mcpServers) return options;
  return { ...options, tools: { ...options?.tools, mcpServers } };
}
