import { HatcheryError } from '../core/errors.js';
import type { PathGuard } from '../core/fs/paths.js';
import type { TraceContext } from '../core/trace.js';
import { type ChatMessage, fullUsage, type Provider, type Usage } from '../providers/types.js';
import type {
  AskFn,
  ChildOptions,
  Hatchery,
  NodeMemo,
  RunContext,
  RunEvent,
  RunLocalState,
  RunMeter,
  RunServices,
  RunState,
} from './contracts.js';
import { OutSlots } from './out-slots.js';
import { raiseInTemplate, renderState, type Template, type TemplateVars } from './templates/templates.js';

/** The largest out a scope moves once its children are over (see Scope.moveOut). */
const MOVE_MAX = 32;

/**
 * An empty out on top of `proto`, in dictionary mode from the start (a null-prototype object is;
 * setPrototypeOf keeps it): every branch writes its own node names into its out, and on a fast object
 * each new name is a hidden-class transition of a map made per run (about 1 µs a branch, a quarter of
 * a wide fan-out's time).
 */
function outOver(proto: Record<string, unknown> | null): Record<string, unknown> {
  return Object.setPrototypeOf(Object.create(null), proto) as Record<string, unknown>;
}

/** State shared by a top-level run and every run nested in it (hatch:, node:, branches). */
export class RunShared implements RunState {
  /** Node executions so far, across nested runs. */
  steps = 0;
  /** Tool calls so far (their ids), counted only while someone listens. */
  calls = 0;
  readonly usage: Usage = fullUsage(0, 0);
  /** What the tool layer keeps for the run (see RunState.toolMemo). */
  toolMemo: Map<object, unknown> | undefined = undefined;

  constructor(
    readonly services: RunServices,
    readonly runId: string,
    readonly signal: AbortSignal,
    readonly maxSteps: number,
    readonly maxDepth: number,
    /** Undefined when nobody listens, so no event object is ever built for nothing. */
    readonly emit: ((event: RunEvent) => void) | undefined,
    /** The MCP client's model, when the run came from a client that offers sampling. */
    readonly sampling: Provider | undefined,
    /** Budget and cost of the run tree. */
    readonly meter: RunMeter,
    /** Journal results a resumed run takes instead of running nodes again. */
    readonly memo: NodeMemo | undefined = undefined,
    /** Asks a person; undefined suspends the run at the question. */
    readonly ask: AskFn | undefined = undefined,
    /** The run's trace context, passed on to the MCP servers its tools call. */
    readonly trace: TraceContext | undefined = undefined,
  ) {}
}

/**
 * State of one hatchery run that its child scopes (node: tools, branches, loops) share. The maps are
 * made on first use: most runs use neither max_visits nor conversation reuse.
 */
class RunLocal implements RunLocalState {
  private visitMap: Map<string, number> | undefined;
  private conversationMap: Map<string, { system: string; messages: ChatMessage[] }> | undefined;

  /** Executions per node name (max_visits). */
  get visits(): Map<string, number> {
    this.visitMap ??= new Map();
    return this.visitMap;
  }

  /** Message history of each drone that ran, for `conversation` reuse. */
  get conversations(): Map<string, { system: string; messages: ChatMessage[] }> {
    this.conversationMap ??= new Map();
    return this.conversationMap;
  }
}

/**
 * The variables one run (or one child of it) sees. Child scopes read their parent's ctx and out
 * through the prototype chain and keep their own writes, so nothing is ever copied.
 */
export class Scope implements RunContext {
  /** The variables renders get; `out` is the OutSlots while this scope keeps its outputs by index. */
  private readonly renderVars: TemplateVars;
  /** A top-level scope's outputs by node index, until something reads `out` whole (see out-slots.ts). */
  private slots: OutSlots | undefined = undefined;
  /** This scope's outputs as a dictionary; a child's is shared with its siblings until its first write. */
  private outDict: Record<string, unknown>;
  /** Output of the node that ran last in this scope (a script's default stdin). */
  last = '';
  /** Node executions walked in this scope so far. */
  seq = 0;
  /** Step of the node executing here; a child starts with its parent's. */
  step = 0;
  /** Step of the loop node whose body this scope is walking (see RunContext.bodyOf). */
  bodyOf: number | undefined = undefined;
  /** State shared by the scopes of one hatchery run. */
  readonly local: RunLocal;
  /** Cancellation of this scope: the run's signal, or a fan-out's that also fires when a sibling fails. */
  readonly signal: AbortSignal;
  /** False while `out` is the view this scope's parent shares with its children (see setOut). */
  private ownOut = true;
  /** The empty view on this scope's out that its children read until their first write. */
  private childView: Record<string, unknown> | undefined;
  /** Set for a fan-out's branch: nobody reads its out after its last node (see RunContext.outUnread). */
  outUnread = false;
  /** Writes to `outDict` so far (at least its own entries): whether moveOut's copy is small. */
  private outWrites = 0;

  constructor(
    readonly hatchery: Hatchery,
    readonly shared: RunShared,
    readonly guard: PathGuard,
    readonly ctx: Record<string, unknown>,
    /**
     * This scope's outputs (a child's is shared with its siblings until its first write, see setOut);
     * undefined for a top-level scope, which keeps them by node index until they are read whole.
     */
    out: Record<string, unknown> | undefined,
    readonly depth: number,
    /** Stable place of this scope in the run ('' at the top), undefined where not resumable one by one. */
    readonly path: string | undefined,
    readonly parent?: Scope,
    local?: RunLocal,
    signal?: AbortSignal,
    /** Step of the node execution that made this scope (see RunContext.parentStep). */
    readonly parentStep: number | undefined = undefined,
    /** Tool call this scope runs under (see RunContext.parentCall). */
    readonly parentCall: number | undefined = undefined,
    /** A spawned agent's scope. */
    readonly agent = false,
    /** The map item this scope runs (see RunContext.item). */
    readonly item: number | undefined = undefined,
  ) {
    this.local = local ?? new RunLocal();
    this.signal = signal ?? shared.signal;
    let dict = out;
    if (dict === undefined) {
      const slots = new OutSlots(hatchery.nodes);
      this.slots = slots;
      // Renders get the slots in place of `out` (templates.ts reads `out.<node>` from them).
      dict = slots as unknown as Record<string, unknown>;
    }
    this.outDict = dict;
    this.renderVars = { ctx, out: dict, fread: (ctx as { fread: (p: string) => string }).fread };
  }

  /** Outputs of the nodes so far, by name (built from the slots on the first read, see out-slots.ts). */
  get out(): Record<string, unknown> {
    if (this.slots !== undefined) this.unslot();
    return this.outDict;
  }

  /** What templates see: ctx, out (as a dictionary), fread. */
  get vars(): TemplateVars {
    if (this.slots !== undefined) this.unslot();
    return this.renderVars;
  }

  /** Builds the dictionary of the slots (or takes the one a render built) and keeps it from now on. */
  private unslot(): void {
    const slots = this.slots!;
    this.outDict = slots.materialize(this.renderVars);
    this.outWrites = slots.entries;
    this.slots = undefined;
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
    return t.render(this.renderVars);
  }

  /** Writes a `save_output` variable here and in every enclosing scope of the same run. */
  save(key: string, value: unknown): void {
    // Writes through the chain on purpose: save_output is how a child (node: tool, branch)
    // hands a value back to its caller; anything else it sets stays private.
    for (let s: Scope | undefined = this; s; s = s.parent) s.ctx[key] = value;
  }

  /**
   * Sets out.<name> in this scope. A child reads an empty view on its parent's out, shared with its
   * siblings, until its first write makes its own: a branch whose only write is skipped (its last
   * node's, see outUnread) allocates none. Every write to a scope's out goes through here.
   */
  setOut(name: string, value: unknown, index?: number): void {
    const slots = this.slots;
    if (slots !== undefined) {
      if (slots.dict === undefined) {
        const at = index !== undefined && slots.names[index] === name ? index : slots.indexOf(name);
        if (at >= 0) {
          slots.set(at, value);
          return;
        }
      }
      // A render built the dictionary, or a name that is no node of this file: by name from now on.
      this.unslot();
    }
    if (!this.ownOut) this.ownOutput();
    else if (this.childView !== undefined && this.outWrites <= MOVE_MAX) this.moveOut();
    this.outDict[name] = value;
    this.outWrites++;
  }

  /**
   * Gives this scope a new out, not the prototype of its children's views, for the writes that come
   * once they are over (a scope writes its out only after the node that made them has ended). V8 keeps
   * a prototype alive, with all it holds, until the next young collection whatever has become of it
   * (the maps of its children's objects point to it), so the outputs of a wide fan-out written into
   * it were all copied to the old generation at every run (~66 bytes a branch). Only a small out is
   * moved (its entries are copied): a large one stays, and a copy per fan-out cannot add up.
   */
  private moveOut(): void {
    const old = this.outDict;
    const out = outOver(Object.getPrototypeOf(old) as Record<string, unknown> | null);
    for (const key of Object.keys(old)) out[key] = old[key];
    this.useOut(out);
    this.childView = undefined;
  }

  /** Gives this scope an out of its own, on top of its parent's, in place of the shared view. */
  private ownOutput(): void {
    this.useOut(outOver(Object.getPrototypeOf(this.outDict) as Record<string, unknown>));
    this.ownOut = true;
  }

  /** Makes `out` this scope's out, for its writes and its renders. */
  private useOut(out: Record<string, unknown>): void {
    this.outDict = out;
    this.renderVars.out = out;
  }

  /**
   * A child scope: sees this scope's variables, keeps its own writes (node: tools, branches).
   * `signal` replaces the run's signal for the child (fan-outs cancel their siblings with it).
   */
  child(own?: Record<string, unknown>, opts: ChildOptions = {}): Scope {
    const ctx = Object.create(this.ctx) as Record<string, unknown>;
    if (own !== undefined) Object.assign(ctx, own);
    // The view's prototype is this scope's out while its children run: a scope that has children owns
    // its out, and replaces it only once they are over (moveOut, at its next write).
    if (!this.ownOut) this.ownOutput();
    // A child reads its parent's outputs through its prototype chain: they must be a dictionary.
    if (this.slots !== undefined) this.unslot();
    this.childView ??= outOver(this.outDict);
    const s = new Scope(
      this.hatchery,
      this.shared,
      this.guard,
      ctx,
      this.childView,
      opts.depth ?? this.depth,
      opts.path,
      this,
      this.local,
      opts.signal ?? this.signal,
      this.step,
      // Not inherited: a branch's nodes sit under the node that made it, not under its run's call.
      opts.call,
      opts.agent === true,
      opts.item,
    );
    s.ownOut = false;
    s.outUnread = opts.outUnread === true;
    s.last = this.last;
    s.step = this.step;
    return s;
  }
}
