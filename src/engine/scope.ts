import { HatcheryError } from '../core/errors.js';
import type { PathGuard } from '../core/fs/paths.js';
import { fullUsage } from '../providers/types.js';
import type { ChildOptions, Hatchery, RunContext, RunLocalState, RunState } from './contracts.js';
import { raiseInTemplate, renderState, type Template, type TemplateVars } from './templates/templates.js';

/** What a top-level run starts with: the fields of RunState that the run sets once. */
export type RunSharedInit = Pick<
  RunState,
  'services' | 'runId' | 'signal' | 'maxSteps' | 'maxDepth' | 'emit' | 'sampling' | 'meter'
> &
  Partial<Pick<RunState, 'memo' | 'ask' | 'trace' | 'durable'>>;

/**
 * The state a top-level run shares with every run nested in it (hatch:, node:, branches): what it
 * starts with, and its counters at zero. One literal, so every run's state has the same fields.
 */
export function runShared(init: RunSharedInit): RunState {
  const state: RunState = {
    services: init.services,
    runId: init.runId,
    signal: init.signal,
    maxSteps: init.maxSteps,
    maxDepth: init.maxDepth,
    emit: init.emit,
    sampling: init.sampling,
    steps: 0,
    calls: 0,
    usage: fullUsage(0, 0),
    meter: init.meter,
    memo: init.memo,
    ask: init.ask,
    trace: init.trace,
    toolMemo: undefined,
    durable: init.durable,
  };
  init.durable?.track?.(state);
  return state;
}

/** What a Scope is made of: its run, file access, variables and place in the run. */
export interface ScopeInit
  extends Pick<RunContext, 'hatchery' | 'guard' | 'ctx' | 'depth' | 'path'>,
    Partial<Pick<RunContext, 'parentStep' | 'parentCall' | 'item' | 'agent' | 'outUnread'>> {
  readonly shared: RunState;
  /** Replaces the run's signal (a fan-out's, a tool call's). */
  readonly signal?: AbortSignal;
}

/**
 * The variables one run (or one child of it) sees. Child scopes read their parent's ctx and out
 * through the prototype chain and keep their own writes, so nothing is ever copied.
 */
export class Scope implements RunContext {
  /** Outputs of the nodes so far, by name: own writes on top of the parent scope's out. */
  readonly out: Record<string, unknown>;
  /** What templates see: ctx, out, fread. */
  readonly vars: TemplateVars;
  /** Output of the node that ran last in this scope (a script's default stdin). */
  last = '';
  /** Node executions walked in this scope so far. */
  seq = 0;
  /** Step of the node executing here; a child starts with its parent's. */
  step = 0;
  /** Step of the loop node whose body this scope is walking (see RunContext.bodyOf). */
  bodyOf: number | undefined = undefined;
  /** State shared by the scopes of one hatchery run (node: tools, branches, loops). */
  readonly local: RunLocalState;
  /** Cancellation of this scope: the run's signal, or a fan-out's that also fires when a sibling fails. */
  readonly signal: AbortSignal;
  /** Set for a fan-out's branch: nobody reads its out after its last node (see RunContext.outUnread). */
  readonly outUnread: boolean;
  readonly hatchery: Hatchery;
  readonly shared: RunState;
  readonly guard: PathGuard;
  readonly ctx: Record<string, unknown>;
  readonly depth: number;
  /** Stable place of this scope in the run ('' at the top), undefined where not resumable one by one. */
  readonly path: string | undefined;
  /** Step of the node execution that made this scope (see RunContext.parentStep). */
  readonly parentStep: number | undefined;
  /** Tool call this scope runs under (see RunContext.parentCall). */
  readonly parentCall: number | undefined;
  /** A spawned agent's scope. */
  readonly agent: boolean;
  /** The map item this scope runs (see RunContext.item). */
  readonly item: number | undefined;

  /** A scope of a run; with `parent`, a child that sees the parent's out and shares its run-local state. */
  constructor(
    init: ScopeInit,
    readonly parent?: Scope,
  ) {
    this.hatchery = init.hatchery;
    this.shared = init.shared;
    this.guard = init.guard;
    this.ctx = init.ctx;
    this.depth = init.depth;
    this.path = init.path;
    this.parentStep = init.parentStep;
    this.parentCall = init.parentCall;
    this.agent = init.agent === true;
    this.item = init.item;
    this.outUnread = init.outUnread === true;
    this.local = parent?.local ?? { visits: new Map(), conversations: new Map() };
    this.signal = init.signal ?? init.shared.signal;
    // Null-prototype all the way down: a node named like a field of Object.prototype is just a key,
    // and the template sandbox reads these chains as data (sandbox.ts).
    this.out = Object.create(parent?.out ?? null) as Record<string, unknown>;
    this.vars = { ctx: init.ctx, out: this.out, fread: (init.ctx as { fread: (p: string) => string }).fread };
  }

  /**
   * The prototype of every top-level ctx of `hatchery`: holds only `fread`, bound to its folder and
   * roots. Built once per hatchery and guard; each run's ctx is a fresh object on top of it.
   */
  static ctxBase(hatchery: Hatchery, guard: PathGuard): Record<string, unknown> {
    const fread = (p: unknown): string => {
      try {
        const limit = renderState.limit;
        return guard.readTextSync(
          hatchery.dir,
          String(p),
          { function: 'fread' },
          {
            maxBytes: limit,
            tooBig: (size) =>
              new HatcheryError(
                'TEMPLATE',
                `fread("${String(p)}"): the file holds ${size} bytes, past the template limit of ${limit} (--max-render-chars); read a smaller file, or raise the limit`,
                { path: String(p), limit },
              ),
          },
        );
      } catch (err) {
        if (err instanceof HatcheryError) raiseInTemplate(err);
        const code = (err as NodeJS.ErrnoException).code ?? '';
        raiseInTemplate(
          new HatcheryError('FILE_IO', `fread("${String(p)}") failed: ${code || (err as Error).message}`, {
            path: String(p),
          }),
        );
      }
    };
    // Non-enumerable and inherited: `ctx.fread` works in templates but never shows up when ctx is listed.
    return Object.create(null, { fread: { value: fread, enumerable: false } });
  }

  /** Renders a compiled template with this scope's variables. */
  render(t: Template): string {
    return t.render(this.vars);
  }

  /** Writes a `save_output` variable here and in every enclosing scope of the same run. */
  save(key: string, value: unknown): void {
    // Writes through the chain on purpose: save_output is how a child (node: tool, branch)
    // hands a value back to its caller; anything else it sets stays private.
    for (let s: Scope | undefined = this; s; s = s.parent) s.ctx[key] = value;
  }

  /** Sets out.<name> in this scope (its children and later nodes read it; its parent does not). */
  setOut(name: string, value: unknown): void {
    this.out[name] = value;
  }

  /**
   * A child scope: sees this scope's variables, keeps its own writes (node: tools, branches).
   * `signal` replaces the run's signal for the child (fan-outs cancel their siblings with it).
   */
  child(own?: Record<string, unknown>, opts: ChildOptions = {}): Scope {
    const ctx = Object.create(this.ctx) as Record<string, unknown>;
    if (own !== undefined) Object.assign(ctx, own);
    const s = new Scope(
      {
        hatchery: this.hatchery,
        shared: this.shared,
        guard: this.guard,
        ctx,
        depth: opts.depth ?? this.depth,
        path: opts.path,
        signal: opts.signal ?? this.signal,
        parentStep: this.step,
        // Not inherited: a branch's nodes sit under the node that made it, not under its run's call.
        parentCall: opts.call,
        agent: opts.agent,
        item: opts.item,
        outUnread: opts.outUnread,
      },
      this,
    );
    s.last = this.last;
    s.step = this.step;
    return s;
  }
}
