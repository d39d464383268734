import { setMaxListeners } from 'node:events';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Server, Tool, Transport } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio } from '@modelcontextprotocol/server/stdio';
import { waitAtMost } from '../core/cancel.js';
import { formatError, HatcheryError, shutdownReason } from '../core/errors.js';
import { packageVersion } from '../core/package.js';
import { secretRedactor } from '../core/secrets.js';
import { VENDORS } from '../providers/vendors.js';
import type { Runtime } from '../runtime/runtime.js';
import { GENERIC_TOOL_NAMES } from './generic/tools.js';
import type { ServerHost } from './host.js';
import { serverInstructions } from './instructions.js';
import { RunSlots } from './limiter.js';
import { OutboundGuard } from './outbound.js';
import { OutputStore } from './outputs.js';
import { DEFAULT_HEARTBEAT_MS } from './progress.js';
import { changedTools, HatcheryRegistry, importLoader, type RegistryChange } from './registry.js';
import { servesRun } from './run-access.js';
import { RunRegistry } from './runs.js';
import {
  DEFAULT_SYNC_WAIT_MS,
  DEFAULT_TASK_WAIT_MS,
  type HatcheryServerOptions,
  type LogLevel,
} from './server-options.js';
import { createSession, loadCallHandling, type Session } from './session.js';
import { folderWatcher, ownRuntime, recoverRuns } from './start-up.js';
import type { HatcheryWatcher } from './watcher.js';

export { DEFAULT_TASK_WAIT_MS, type HatcheryServerOptions, type LogLevel } from './server-options.js';

/** Margin under the load's start time from which a file's modification time counts as an edit. */
const MTIME_MARGIN_MS = 50;

/** Longest wait for a first tools/list before the folder is watched anyway, in milliseconds. */
const WATCH_DELAY_MS = 300;

/** CPU time given to deferred loads per event-loop turn, in milliseconds (see settleInBackground). */
const SETTLE_SLICE_MS = 8;

/**
 * Serves every hatchery of a folder as an MCP tool. One shared registry feeds any number of sessions
 * (one for stdio, one per HTTP client); files are watched and reloaded; runs never share a ctx.
 */
export class HatcheryMcpServer implements ServerHost {
  readonly registry: HatcheryRegistry;
  readonly slots: RunSlots;
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
  readonly listAllRuns: boolean;
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
    this.slots = new RunSlots(options.maxConcurrent);
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
    this.out = new OutboundGuard(this.redact, options, this.outputs);
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.genericTools = options.genericTools !== false;
    this.listAllRuns = options.listAllRuns === true;
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
    // A server runs again (after a replica died) only runs of the files it serves, as it resumes only those.
    runtime.recoverable = (run) => servesRun(this, run);
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
      const loading = importLoader();
      if (!this.built) this.adopt(await ownRuntime(this.options));
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
    this.readying ??= this.buildRuntime().then(() =>
      recoverRuns(this, this.options.resumeInterrupted === true),
    );
    return this.readying;
  }

  /** Loads the folder (reporting broken files), starts watching it, and returns the server. */
  static async start(options: HatcheryServerOptions): Promise<HatcheryMcpServer> {
    const dir = path.resolve(options.dir);
    // A path that is missing or cannot be read is reported below, as one that is no folder.
    const isDir = await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    );
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
      // Not awaited: chokidar's scan (about 140 ms at 1,000 files) and what follows it start once the
      // first tools/list is answered (or after a short while without one), so they never delay it.
      const { watcher, begin } = folderWatcher(server, since, options.debounceMs);
      server.startWatching = () => {
        server.startWatching = undefined;
        begin();
      };
      // A server closed before then exits at once: the watcher would not start after close anyway.
      setTimeout(() => server.startWatching?.(), WATCH_DELAY_MS).unref();
      watcher.watchFiles(server.registry.dependencies());
      server.watcher = watcher;
    }
    return server;
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
    for (const v of VENDORS) if (env[v.keyVar]) v.load().catch(() => undefined);
  }

  /**
   * Completes the deferred loads (see deferLoad) a few milliseconds per event-loop turn, so requests
   * are answered in between; a call needing a file still waiting completes that one at once. Once,
   * from warmUp.
   */
  private settleInBackground(): void {
    if (this.registry.pendingCount === 0) return;
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
    return serverInstructions(this.registry.dir, this.registry.listed(), this.out, this.genericTools);
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
      this.shutdown.abort(shutdownReason());
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
