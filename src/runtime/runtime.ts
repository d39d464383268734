import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describeAbort, neverAborted } from '../core/cancel.js';
import { formatError, HatcheryError, withContext } from '../core/errors.js';
import { PathGuard } from '../core/fs/paths.js';
import { WritePolicy } from '../core/fs/write-policy.js';
import { secretValues } from '../core/secrets.js';
import { traceContext } from '../core/trace.js';
import type {
  DurableSteps,
  EventPlace,
  Hatchery,
  LoadOptions,
  NodeResult,
  RunContext,
  RunEvent,
  RunListener,
  RunServices,
  RunState,
} from '../engine/contracts.js';
import { runShared, Scope } from '../engine/scope.js';
import { setTemplateTextLimit } from '../engine/templates/templates.js';
import { walk } from '../engine/walk.js';
import { prepareResume, type ResumeOptions } from '../journal/resume.js';
import type { RunMeta, RunStore } from '../journal/store.js';
import { HatcheryCache } from '../loader/load.js';
import { sdkFactory } from '../providers/factory.js';
import { ProviderRegistry } from '../providers/resolve.js';
import { ToolResolver } from '../tools/resolve.js';
import { checkDepth, type RunBudget, runBudget } from './budget.js';
import { checkRecoverable, runJournaled } from './journaled.js';
import { safeListener, traced } from './listeners.js';
import type { DurableEngine, RunOptions, RunResult, RuntimeOptions } from './options.js';
import { RunScopes } from './run-scope.js';
import { type Telemetry, telemetryEnabled, telemetryFromEnv } from './telemetry/index.js';

export type { RunOptions, RunResult, RuntimeOptions };

/** What the caller of a prepared attempt gives it (see Runtime.prepareResume). */
type AttemptOptions = Pick<ResumeOptions, 'signal' | 'onEvent' | 'sampling'> & Pick<RunOptions, 'durable'>;

/** Default node-execution budget of a run. */
export const DEFAULT_MAX_STEPS = 100;
/** Default nesting limit of hatch:/node: runs. */
export const DEFAULT_MAX_DEPTH = 5;

/**
 * Runs hatcheries: the composition root. It owns the provider registry, the tool resolver and the one
 * cache of hatchery files, and gives runs the services of engine/contracts.ts. Re-entrant: runs never
 * share ctx, and nested runs share only budget and listener.
 */
export class Runtime {
  readonly env: Readonly<Record<string, string | undefined>>;
  private readonly providers: ProviderRegistry;
  readonly tools: ToolResolver;
  private readonly guard: PathGuard;
  /** Hatchery files loaded by path (the CLI's file, hatch: sub-files): one cache, one set of load options. */
  readonly hatcheries: HatcheryCache;
  /** How this runtime loads files; a server loads its folder with the same options. */
  readonly loadOptions: LoadOptions;
  private readonly services: RunServices;
  /** The top-level scopes of runs: their guards, ctx and checks, kept per hatchery. */
  private readonly scopes: RunScopes;
  private readonly options: RuntimeOptions;
  /** Journaled runs running now, by id: a cancel from the store aborts them. */
  private readonly running = new Map<string, AbortController>();
  /** Where runs are journaled; undefined when runs keep no journal. */
  readonly store: RunStore | undefined;
  /** OpenTelemetry traces: unasked (undefined), off (null), or set up once on the first run. */
  private telemetry: Promise<Telemetry | undefined> | null | undefined;

  constructor(options: RuntimeOptions = {}) {
    this.options = options;
    this.store = options.store;
    this.env = options.env ?? process.env;
    const policy = new WritePolicy({
      cwd: options.cwd,
      allowRoots: options.allowRoots,
      allowWrite: options.allowWrite,
      protectedDirs: options.protectedDirs,
      protectedFiles: options.protectedFiles,
    });
    const store = options.store;
    // A run the engine recovers runs again inside its workflow, finished steps answered from checkpoints.
    options.engine?.attach(async (id, durable) => {
      if (store) await checkRecoverable(store, id, this.recoverable);
      return (await this.prepareResume(id, { byEngine: true }))({ durable });
    });
    if (store) {
      // A run that could write there could forge its own journal (or another run's).
      if (path.isAbsolute(store.location)) policy.protectState(store.location);
      store.addSecrets?.(secretValues(this.env));
      store.onCancel((id) =>
        this.running.get(id)?.abort(new HatcheryError('ABORTED', `run ${id} was cancelled (runs cancel)`)),
      );
    }
    // The write roots (which hold the --allow-root folders) are read roots too: a run may read back what it wrote.
    this.guard = new PathGuard(policy.roots, policy);
    this.providers = new ProviderRegistry({
      env: this.env,
      overrides: options.providers,
      factory: options.providerFactory ?? sdkFactory,
      maxReplyBytes: options.maxReplyBytes,
    });
    if (options.maxRenderChars !== undefined) setTemplateTextLimit(options.maxRenderChars);
    const toolOptions = options.tools ?? {};
    const cassette = options.cassette;
    // Constant paths of the files it loads are checked against the same roots its runs are confined to.
    this.loadOptions = {
      mcpServers: toolOptions.mcpServers,
      roots: {
        read: this.guard.roots,
        write: policy.roots,
        writeProblem: (p, abs, dir) => policy.loadWriteProblem(p, abs, dir),
      },
    };
    this.hatcheries = new HatcheryCache(this.loadOptions);
    this.tools = new ToolResolver(toolOptions, async (abs, check) => {
      const h = await this.hatcheries.get(abs, check);
      // Its folder is protected from writes before any of its runs (or the caller's) can write.
      this.scopes.guardFor(h);
      return h;
    });
    this.scopes = new RunScopes(this.guard, this.tools);
    this.services = {
      resolveModel: cassette
        ? (spec, baseURL, sampling, where, fallback) =>
            cassette.resolveModel(
              () => this.providers.resolve(spec, baseURL, sampling, where, fallback),
              spec,
              where,
              fallback,
              sampling !== undefined,
            )
        : (spec, baseURL, sampling, where, fallback) =>
            this.providers.resolve(spec, baseURL, sampling, where, fallback),
      resolveTools: (ref, scope) => this.tools.resolve(ref, scope),
      runHatchery: (h, tc, input, vars) => this.runNested(h, tc.scope, input, vars, tc.signal, tc.call),
      runFromNode: (tc, node, input) => this.runFromNode(tc.scope, node, input, tc.signal, tc.call),
      toolTimeoutMs: this.tools.toolTimeoutMs,
      resultLimit: this.tools.resultLimit,
      network: toolOptions,
      recorder: cassette,
    };
  }

  /**
   * Which runs a durable engine may run again in this process after their process died: a server's,
   * the runs of the files it serves; none by default (a `run` command runs only its own).
   */
  recoverable: ((run: RunMeta) => boolean) | undefined;

  /** The durable engine whose workflows runs are (it recovers them itself); undefined without one. */
  get engine(): DurableEngine | undefined {
    return this.options.engine;
  }

  /** Loads (or returns the cached current version of) the hatchery file at `file`. */
  load(file: string): Promise<Hatchery> {
    return this.hatcheries.get(file);
  }

  /** Closes what runs opened and the runtime keeps (MCP client connections and their server processes). */
  async close(): Promise<void> {
    // Spans are flushed before the process that closes us exits (run, serve's shutdown), while the
    // MCP servers close: a slow collector must not keep their processes alive.
    const flushed = this.telemetry?.then((t) => t?.close());
    try {
      // First the engine: runs ended by this close are the engine's to recover, not failed.
      await this.options.engine?.close();
      await this.tools.close();
      await this.options.store?.close();
    } finally {
      await flushed;
    }
  }

  /**
   * Protects a served folder: runs never write in it (unless --allow-write opens it) nor create or
   * change a hatchery file there; `files` lists more files they must never change.
   */
  protectServed(dir: string, files?: () => Iterable<string>): void {
    this.guard.policy.protectServed(dir, files);
  }

  /**
   * Runs a hatchery from its start node with a fresh ctx. Rejects with a HatcheryError on failure.
   * Not async: without telemetry the run starts at once, one frame and one hop less per call.
   */
  run(h: Hatchery, options: RunOptions = {}): Promise<RunResult> {
    try {
      // The trace context comes from outside (a client's _meta): checked once, dropped when malformed.
      if (options.trace !== undefined) options = { ...options, trace: traceContext(options.trace) };
      // Without an OTLP endpoint this is one property read: nothing of OpenTelemetry is loaded.
      if (this.telemetry === undefined) {
        this.telemetry = telemetryEnabled(this.env) ? telemetryFromEnv(this.env) : null;
      }
      if (this.telemetry !== null) {
        const own = options;
        return this.telemetry.then((telemetry) =>
          this.begin(h, telemetry ? { ...own, onEvent: traced(telemetry.listener(), own.onEvent) } : own),
        );
      }
      return this.begin(h, options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** A run once its listeners are settled: journaled when there is a store. */
  private begin(h: Hatchery, options: RunOptions): Promise<RunResult> {
    const store = this.options.store;
    const engine = this.options.engine;
    if (engine !== undefined && options.durable === undefined) {
      // The run is a workflow of the engine, which hands back its steps.
      const runId = options.runId ?? options.journal?.id ?? randomUUID();
      const body = (durable: DurableSteps) => this.begin(h, { ...options, runId, durable });
      return engine.start(runId, options.attempt ?? 1, body, options.signal);
    }
    if (store) {
      return runJournaled(store, h, options, this.running, (runId, listener, signal, hold) =>
        this.runWith(h, options, runId, listener, signal, hold),
      );
    }
    return this.runWith(
      h,
      options,
      options.runId ?? randomUUID(),
      options.onEvent,
      options.signal ?? neverAborted,
    );
  }

  /** A top-level run: its budget and shared state, then the walk. Not async: one frame less per run. */
  private runWith(
    h: Hatchery,
    options: RunOptions,
    runId: string,
    listener: RunListener | undefined,
    outer: AbortSignal,
    hold?: { shared?: RunState },
  ): Promise<RunResult> {
    let budget: RunBudget;
    let shared: RunState;
    try {
      const maxSteps = options.maxSteps ?? this.options.maxSteps ?? h.maxSteps ?? DEFAULT_MAX_STEPS;
      const maxDepth = this.options.maxDepth ?? h.maxDepth ?? DEFAULT_MAX_DEPTH;
      budget = runBudget(
        h,
        this.options.prices,
        [this.options.budget, options.budget],
        outer,
        listener ? safeListener(listener) : undefined,
      );
      shared = runShared({
        services: this.services,
        runId,
        signal: budget.signal,
        maxSteps,
        maxDepth,
        emit: budget.emit,
        sampling: options.sampling,
        meter: budget.meter,
        memo: options.memo,
        ask: options.ask,
        trace: options.trace,
        durable: options.durable,
      });
      if (hold) hold.shared = shared;
    } catch (err) {
      return Promise.reject(err);
    }
    return this.execute(h, shared, 0, options.input, options.vars, budget.signal).then(
      ({ scope, result }): RunResult => {
        budget.end();
        const { text: output, value } = result;
        return { runId, output, value, usage: shared.usage, steps: shared.steps, outputs: scope.out };
      },
      (err: unknown) => {
        // The run id names the run to resume (a suspended run, INPUT_REQUIRED) or to inspect.
        const failure = withContext(budget.failure(err), { runId });
        budget.end();
        throw failure;
      },
    );
  }

  /**
   * Resumes run `id` from its journal (runtime/resume.ts): the same run id, input and vars, nodes that
   * finished served from the journal, the attempt appended to the same journal. Needs a store.
   */
  async resume(id: string, options: ResumeOptions = {}): Promise<RunResult> {
    const attempt = await this.prepareResume(id, options);
    return attempt(options);
  }

  /**
   * Checks that run `id` can be resumed (it exists, nobody runs it, its file is unchanged or `force`)
   * and opens its next attempt, which the returned function runs; a caller that runs it later (a
   * background run) still gets a refusal at once.
   */
  async prepareResume(
    id: string,
    options: Omit<ResumeOptions, 'signal' | 'onEvent' | 'sampling'> = {},
  ): Promise<(run: AttemptOptions) => Promise<RunResult>> {
    const store = this.options.store;
    if (!store) {
      throw new HatcheryError(
        'USAGE',
        `cannot resume run ${id}: this runtime keeps no journal (no run store)`,
      );
    }
    const r = await prepareResume(store, (file) => this.load(file), id, options);
    const { meta } = r.stored;
    return (run) => {
      run.durable?.recorded?.(r.stored.records);
      return this.run(r.hatchery, {
        durable: run.durable,
        attempt: r.stored.summary.attempts + 1,
        runId: meta.id,
        journal: r.journal,
        memo: r.memo,
        ask: r.ask,
        input: meta.input,
        vars: meta.vars,
        source: meta.source,
        trace: meta.trace,
        signal: run.signal,
        onEvent: run.onEvent,
        sampling: run.sampling,
      });
    };
  }

  /**
   * Runs a hatchery nested in another run (a hatch: tool): fresh ctx, the parent's step budget and
   * event listener, one level deeper. `signal` is the calling tool call's: the nested run ends with it.
   */
  private async runNested(
    h: Hatchery,
    parent: RunContext,
    input: string,
    vars: Readonly<Record<string, string>> | undefined,
    signal: AbortSignal,
    call: number | undefined,
  ): Promise<string> {
    const shared = parent.shared;
    const depth = parent.depth + 1;
    checkDepth(shared, depth, h);
    const place: EventPlace = { parent: parent.step };
    if (call !== undefined) place.call = call;
    const { result } = await this.execute(h, shared, depth, input, vars, signal, place);
    return result.text;
  }

  /**
   * Walks a hatchery from its start node in a fresh scope, between a run_start and a run_end event
   * (depth 0 for a top-level run). A top-level run that failed because it was cancelled fails ABORTED.
   */
  private async execute(
    h: Hatchery,
    shared: RunState,
    depth: number,
    input: string | undefined,
    vars: Readonly<Record<string, string>> | undefined,
    signal: AbortSignal,
    place?: EventPlace,
  ): Promise<{ scope: RunContext; result: NodeResult }> {
    const emit = shared.emit;
    const t0 = emit ? performance.now() : 0;
    const steps0 = shared.steps;
    if (emit) {
      const event: Extract<RunEvent, { type: 'run_start' }> = {
        type: 'run_start',
        runId: shared.runId,
        hatchery: h.name,
        depth,
        file: h.file,
        ...place,
      };
      if (input !== undefined) event.input = input;
      if (vars !== undefined) event.vars = vars;
      if (depth === 0 && shared.trace !== undefined) event.trace = shared.trace;
      emit(event);
    }
    let done: { scope: RunContext; result: NodeResult } | undefined;
    let error: HatcheryError | undefined;
    try {
      // A scope needs no wait unless the file reads `files` or the first run checks its js: tools.
      const made = this.scopes.scopeFor(h, shared, depth, input, vars, signal, place);
      const scope = made instanceof Scope ? made : await made;
      const walked = await walk(scope, h.start);
      // The file's own `output` says what its result is; it reads the outputs of the whole run.
      done = { scope, result: h.output === undefined ? walked : { text: scope.render(h.output) } };
    } catch (err) {
      error =
        depth === 0 && signal.aborted
          ? withContext(
              // A spent budget (BUDGET_EXHAUSTED) stops the run through its signal: report that, not ABORTED.
              signal.reason instanceof HatcheryError && signal.reason.code === 'BUDGET_EXHAUSTED'
                ? signal.reason
                : err instanceof HatcheryError && err.code === 'ABORTED'
                  ? err
                  : new HatcheryError('ABORTED', describeAbort(signal.reason), {}, { cause: err }),
              { file: h.file },
            )
          : withContext(err, { file: h.file });
    }
    // One end for both outcomes: the fields the other outcome has are undefined (left out of records).
    emit?.({
      type: 'run_end',
      runId: shared.runId,
      hatchery: h.name,
      depth,
      ok: error === undefined,
      output: done?.result.text,
      error: error && formatError(error),
      code: error?.code,
      usage: shared.usage,
      steps: shared.steps - steps0,
      ms: performance.now() - t0,
      ...place,
    });
    if (error) throw error;
    return done!;
  }

  /**
   * Runs from one node of the caller's hatchery along its next chain, in a child scope (node: tools).
   * `signal` is the calling tool call's: the child run ends with it.
   */
  private async runFromNode(
    parent: RunContext,
    node: string,
    input: string,
    signal: AbortSignal,
    call: number | undefined,
  ): Promise<string> {
    checkDepth(parent.shared, parent.depth + 1, parent.hatchery);
    // Only the walk's result leaves the node's run: its last output is read by nobody.
    const child = parent.child({ input }, { depth: parent.depth + 1, signal, call, outUnread: true });
    // The node starts a run of its own: its "previous output" (a script's default stdin) is the tool's input.
    child.last = input;
    const result = await walk(child, node);
    return result.text;
  }
}
