import { abortedError, throwIfAborted, watchAbort } from '../core/cancel.js';
import { formatError, HatcheryError } from '../core/errors.js';
import type { TraceContext } from '../core/trace.js';

import type { RunContext, RunEvent, Tool, ToolContext, ToolRef, ToolResult } from '../engine/contracts.js';
import { cancelDeadline, type Deadline, startDeadline } from './deadline.js';
import { settledList } from './js-settled.js';

/** A promise of `r`: itself when it is one. */
function promised(r: ToolResult | Promise<ToolResult>): Promise<ToolResult> {
  return r instanceof Promise ? r : Promise.resolve(r);
}

/** Cuts a tool result to `limit` characters, saying so, so one huge result cannot flood the context. */
export function capResult(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[result cut: ${text.length - limit} of ${text.length} characters omitted; the node's tool_output_limit sets the cap]`;
}

/** A result whose only content is structured also gets it as JSON text, so models and banelings see it. */
function withText(res: ToolResult): ToolResult {
  if (res.text || res.structured === undefined) return res;
  return { ...res, text: JSON.stringify(res.structured) ?? '' };
}

/**
 * Calls one tool with a timeout. Exceptions propagate (banelings fail on them); the tool-use loop
 * turns them into error results instead.
 */
export function callTool(
  scope: RunContext,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  timeoutMs?: number,
  /** The model's id of this call (a drone's tool loop), for the tool_start event. */
  toolCallId?: string,
): Promise<ToolResult> {
  return promised(callToolNow(scope, node, tool, args, timeoutMs, toolCallId));
}

/**
 * callTool, giving the result itself when the call ended at once (Tool.callNow, nobody listening, no
 * cassette): a caller inside a `then` returning it spares the two turns a returned promise costs.
 */
function callToolNow(
  scope: RunContext,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  timeoutMs?: number,
  toolCallId?: string,
): ToolResult | Promise<ToolResult> {
  const shared = scope.shared;
  if (shared.emit !== undefined) return reportedCall(scope, node, tool, args, timeoutMs, toolCallId);
  // Nobody listens: no events, hence no async frame either (its suspended state was most of what a
  // wide fan-out of tool calls allocated). A synchronous failure (a budget refusal, a cancelled run)
  // still becomes a rejection, as in an async function.
  try {
    shared.meter.beforeToolCall(scope.hatchery.file, node, tool.name);
    if (tool.instant) {
      const tc: ToolContext = { scope, signal: scope.signal, node, call: undefined, trace: undefined };
      return Promise.resolve(tool.call(args, tc)).then(withText);
    }
    const ms = timeoutMs ?? shared.services.toolTimeoutMs;
    const rec = shared.services.recorder;
    // A cassette keeps the tool's own result; otherwise the call settles with withText's at once.
    if (rec?.records(tool))
      return rec
        .tool(node, tool, args, () => promised(guarded(scope, node, tool, args, ms, undefined, undefined)))
        .then(withText);
    return guarded(scope, node, tool, args, ms, undefined, undefined, true);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** callTool while someone listens: the same call between a tool_start and a tool_call event. */
async function reportedCall(
  scope: RunContext,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  timeoutMs: number | undefined,
  toolCallId: string | undefined,
): Promise<ToolResult> {
  const shared = scope.shared;
  const ms = timeoutMs ?? shared.services.toolTimeoutMs;
  const emit = shared.emit;
  const t0 = emit ? performance.now() : 0;
  let isError = true;
  let result: string | undefined;
  shared.meter.beforeToolCall(scope.hatchery.file, node, tool.name);
  // While someone listens, each call gets an id (nested runs and spans hang under it) and a start event.
  let call: number | undefined;
  let trace: TraceContext | undefined;
  if (emit) {
    call = ++shared.calls;
    const start: Extract<RunEvent, { type: 'tool_start' }> = {
      type: 'tool_start',
      runId: shared.runId,
      hatchery: scope.hatchery.name,
      node,
      step: scope.step,
      call,
      tool: tool.name,
      ref: tool.ref,
      depth: scope.depth,
      args,
    };
    if (scope.agent && scope.parentCall !== undefined) start.parentCall = scope.parentCall;
    if (toolCallId !== undefined) start.toolCallId = toolCallId;
    emit(start);
    trace = start.trace;
  }
  try {
    let res: ToolResult;
    if (tool.instant) {
      res = await tool.call(args, { scope, signal: scope.signal, node, call, trace });
    } else {
      // Instant tools do no I/O, so only this path asks whether a cassette records the call.
      const rec = shared.services.recorder;
      res = rec?.records(tool)
        ? await rec.tool(node, tool, args, () => promised(guarded(scope, node, tool, args, ms, call, trace)))
        : await guarded(scope, node, tool, args, ms, call, trace);
    }
    isError = res.isError === true;
    const out = withText(res);
    result = out.text;
    return out;
  } catch (err) {
    // Only the tool_call event shows it.
    if (emit) result = formatError(err);
    throw err;
  } finally {
    if (emit) {
      const end: Extract<RunEvent, { type: 'tool_call' }> = {
        type: 'tool_call',
        runId: shared.runId,
        hatchery: scope.hatchery.name,
        node,
        tool: tool.name,
        ref: tool.ref,
        depth: scope.depth,
        ms: performance.now() - t0,
        isError,
        step: scope.step,
        call,
        args,
        result,
      };
      if (scope.agent && scope.parentCall !== undefined) end.parentCall = scope.parentCall;
      emit(end);
    }
  }
}

/**
 * The context a guarded tool call gets: its AbortController is built only when the tool reads
 * `signal`, since most of the cost of a fast call would otherwise be that controller. A class: an
 * object literal with a getter costs V8 a new hidden class per call (~0.4 µs against ~0.02).
 */
class CallContext implements ToolContext {
  // TS-private, not #private: a # field costs a brand check per access, and module code never sees
  // this object (js: tools get a JsCallContext).
  private ctrl: AbortController | undefined = undefined;

  constructor(
    readonly scope: RunContext,
    readonly node: string,
    readonly call: number | undefined,
    readonly trace: TraceContext | undefined,
  ) {}

  get signal(): AbortSignal {
    this.ctrl ??= new AbortController();
    return this.ctrl.signal;
  }

  /** Ends the call's signal (made now if the tool never read it: it may read it later). */
  abort(err: unknown): void {
    this.ctrl ??= new AbortController();
    this.ctrl.abort(err);
  }
}

/**
 * What guards a call that waits: its deadline and its watch of the run's signal, in one object
 * instead of a closure each. A call that ends at once (Tool.callNow) never makes one.
 */
class GuardedCall {
  private done = false;
  private deadline: Deadline | undefined = undefined;
  private unwatch: (() => void) | undefined = undefined;
  private reject: ((err: unknown) => void) | undefined = undefined;

  constructor(
    private readonly ctx: CallContext,
    private readonly tool: Tool,
    private readonly ms: number,
    /** Settle with withText's result (no `then` of its own after the call). */
    private readonly text: boolean,
  ) {}

  /** Starts the call; it settles through `resolve` or `reject`, whichever of the tool, its deadline or a cancel comes first. */
  start(args: Record<string, unknown>, resolve: (res: ToolResult) => void, reject: (err: unknown) => void) {
    this.arm(reject, performance.now());
    let call: Promise<ToolResult>;
    try {
      call = this.tool.call(args, this.ctx);
    } catch (err) {
      this.finish();
      reject(err);
      return;
    }
    this.follow(call, resolve, reject);
  }

  /**
   * A call that did not end at once: from here it ends at its deadline (counted from `from`, a
   * `performance.now()`) or on a cancel, as with `start`.
   */
  wait(call: Promise<ToolResult>, from: number): Promise<ToolResult> {
    return new Promise<ToolResult>((resolve, reject) => {
      this.arm(reject, from);
      this.follow(call, resolve, reject);
    });
  }

  /** Arms the deadline and the watch of the run's signal. */
  private arm(reject: (err: unknown) => void, from: number): void {
    this.reject = reject;
    // One shared timer per timeout value (deadline.ts), not a Node Timeout per call.
    this.deadline = startDeadline(this.ms, this, from);
    const signal = this.ctx.scope.signal;
    this.unwatch = watchAbort(signal, () => this.stop(abortedError(signal)!));
  }

  private follow(
    call: Promise<ToolResult>,
    resolve: (res: ToolResult) => void,
    reject: (err: unknown) => void,
  ): void {
    call.then(
      (res) => {
        if (this.done) return;
        this.finish();
        resolve(this.text ? withText(res) : res);
      },
      (err: unknown) => {
        if (this.done) return;
        this.finish();
        reject(err);
      },
    );
  }

  /** The deadline passed (deadline.ts). */
  expire(): void {
    this.stop(
      new HatcheryError('TIMEOUT', `tool "${this.tool.name}" timed out after ${this.ms} ms`, {
        node: this.ctx.node,
        tool: this.tool.ref,
      }),
    );
  }

  private stop(err: HatcheryError): void {
    if (this.done) return;
    this.finish();
    // Aborted here too: a tool that reads its signal only later must still see the call ended.
    this.ctx.abort(err);
    this.reject!(err);
  }

  private finish(): void {
    this.done = true;
    if (this.deadline !== undefined) cancelDeadline(this.deadline);
    this.unwatch?.();
  }
}

/**
 * Runs a tool call that may wait on I/O: it ends at the timeout or when the run is cancelled, even
 * if the tool ignores its signal.
 */
function guarded(
  scope: RunContext,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  ms: number,
  callId: number | undefined,
  trace: TraceContext | undefined,
  text = false,
): ToolResult | Promise<ToolResult> {
  throwIfAborted(scope.signal);
  const ctx = new CallContext(scope, node, callId, trace);
  const now = tool.callNow;
  if (now === undefined) {
    const g = new GuardedCall(ctx, tool, ms, text);
    return new Promise<ToolResult>((resolve, reject) => g.start(args, resolve, reject));
  }
  // A call that can end at once is made first: ended, it had nothing to time out or to cancel (no
  // guard, timer, watch or promise of its own, and no clock read: ~70 ns, a tenth of a fan-out
  // branch). Otherwise its deadline counts from the moment it returned its promise: for an async
  // function, its first await (what ran before it held the event loop, so no timer could fire then).
  const r = now(args, ctx);
  if (r instanceof Promise) return new GuardedCall(ctx, tool, ms, text).wait(r, performance.now());
  return text ? withText(r) : r;
}

/**
 * Resolves a baneling's reference to exactly one tool and calls it; `args` may be built from the tool
 * (its schema). Gives the result itself when the call ended at once (a js: function of a module the
 * run has looked at already, nobody listening): the caller then needs no `then` of its own. Never
 * throws: failures are rejections.
 */
export function callToolRefNow(
  scope: RunContext,
  node: string,
  ref: ToolRef,
  args:
    | Record<string, unknown>
    | ((tool: Tool, scope: RunContext) => Record<string, unknown> | Promise<Record<string, unknown>>),
  timeoutMs?: number,
): ToolResult | Promise<ToolResult> {
  let tools: Promise<Tool[]>;
  try {
    tools = scope.shared.services.resolveTools(ref, scope);
    // The tools of a js: module the run has looked at already are taken at once (no turn waited).
    const ready = settledList(tools);
    if (ready !== undefined) return callOne(scope, node, ref, ready, args, timeoutMs);
  } catch (err) {
    return Promise.reject(err);
  }
  // A `then`, not an async frame: a fan-out of tool calls keeps one per branch in flight.
  return tools.then((list) => callOne(scope, node, ref, list, args, timeoutMs));
}

/** callToolRefNow's call of the one tool of `list`. */
function callOne(
  scope: RunContext,
  node: string,
  ref: ToolRef,
  list: Tool[],
  args:
    | Record<string, unknown>
    | ((tool: Tool, scope: RunContext) => Record<string, unknown> | Promise<Record<string, unknown>>),
  timeoutMs: number | undefined,
): ToolResult | Promise<ToolResult> {
  const tool = list[0];
  if (list.length !== 1 || !tool) {
    throw new HatcheryError(
      'UNKNOWN_TOOL',
      `"${ref.ref}" stands for ${list.length} tools; a baneling calls one: name it as mcp:<server>/<tool>`,
      { field: 'tool_name' },
    );
  }
  const a = typeof args === 'function' ? args(tool, scope) : args;
  // Only an approval (approve: true) makes the arguments wait; plain calls take no extra await.
  return a instanceof Promise
    ? a.then((x) => callTool(scope, node, tool, x, timeoutMs))
    : callToolNow(scope, node, tool, a, timeoutMs);
}

/** Resolves a drone's references into tools; two tools under one name is an error. */
export async function resolveTools(
  scope: RunContext,
  node: string,
  refs: readonly ToolRef[],
  extra: readonly Tool[] = [],
) {
  const lists = await Promise.all(refs.map((r) => scope.shared.services.resolveTools(r, scope)));
  const byName = new Map<string, Tool>();
  for (const tool of [...lists.flat(), ...extra]) {
    const prev = byName.get(tool.name);
    if (prev) {
      throw new HatcheryError(
        'TOOL',
        `two tools named "${tool.name}" (${prev.ref} and ${tool.ref}); the model could not tell them apart: offer only one`,
        { node, field: 'tools' },
      );
    }
    byName.set(tool.name, tool);
  }
  return byName;
}
