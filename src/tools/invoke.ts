import { abortedError, throwIfAborted, watchAbort } from '../core/cancel.js';
import { formatError, HatcheryError } from '../core/errors.js';
import type { TraceContext } from '../core/trace.js';

import type { RunContext, RunEvent, Tool, ToolContext, ToolRef, ToolResult } from '../engine/contracts.js';

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

/** The options of one tool call. */
export interface CallOptions {
  /** The call's timeout; default the tool's own, else the runtime's (RunServices.toolTimeoutMs). */
  timeoutMs?: number;
  /** The model's id of this call (a drone's tool loop), for the tool_start event. */
  toolCallId?: string;
}

/**
 * Calls one tool with a timeout, between a tool_start and a tool_call event while someone listens.
 * Exceptions propagate (banelings fail on them); the tool-use loop turns them into error results
 * instead.
 */
export function callTool(
  scope: RunContext,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  opts: CallOptions = {},
): Promise<ToolResult> {
  const shared = scope.shared;
  try {
    shared.meter.beforeToolCall(scope.hatchery.file, node, tool.name);
  } catch (err) {
    return Promise.reject(err);
  }
  const durable = shared.durable;
  // On a durable engine a call is a step: after a crash, one that finished is not made (nor reported)
  // again. Instant tools do no I/O: they run again as they ran.
  if (durable === undefined || tool.instant) return made(scope, node, tool, args, opts);
  return durable.step(`tool:${tool.name}`, () => made(scope, node, tool, args, opts));
}

/** Makes a tool call (see callTool), reported while someone listens. */
async function made(
  scope: RunContext,
  node: string,
  tool: Tool,
  args: Record<string, unknown>,
  opts: CallOptions,
): Promise<ToolResult> {
  const shared = scope.shared;
  const ms = opts.timeoutMs ?? tool.timeoutMs ?? shared.services.toolTimeoutMs;
  const emit = shared.emit;
  const t0 = emit ? performance.now() : 0;
  let isError = true;
  let result: string | undefined;
  let key: string | undefined;
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
    if (opts.toolCallId !== undefined) start.toolCallId = opts.toolCallId;
    emit(start);
    trace = start.trace;
  }
  try {
    let res: ToolResult;
    const where = { scope, node, call, trace };
    if (tool.instant) {
      res = await tool.call(args, { ...where, signal: scope.signal });
    } else {
      // Instant tools do no I/O, so only this path asks whether a cassette records the call.
      const rec = shared.services.recorder;
      const run = () => guarded(tool, args, ms, where);
      res = rec?.records(tool) ? await rec.tool(node, tool, args, run) : await run();
    }
    isError = res.isError === true;
    key = res.key;
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
      if (key !== undefined) end.key = key;
      emit(end);
    }
  }
}

/**
 * Runs a tool call that may wait on I/O: it ends at the timeout or when the run is cancelled, even
 * if the tool ignores its signal, which then fires so that the tool can stop what it started.
 */
function guarded(
  tool: Tool,
  args: Record<string, unknown>,
  ms: number,
  where: Omit<ToolContext, 'signal'>,
): Promise<ToolResult> {
  const signal = where.scope.signal;
  throwIfAborted(signal);
  const controller = new AbortController();
  const tc: ToolContext = { ...where, signal: controller.signal };
  // Called before the timer starts: what a call runs before its first await holds the event loop,
  // so its timeout counts from there (a slow synchronous start is not a timeout).
  let pending: Promise<ToolResult>;
  try {
    pending = tool.call(args, tc);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<ToolResult>((resolve, reject) => {
    let done = false;
    const stop = (err: HatcheryError): void => {
      if (done) return;
      finish();
      controller.abort(err);
      reject(err);
    };
    // Node fires a longer delay at once: such a timeout is as good as none.
    const timer =
      ms <= MAX_DELAY
        ? setTimeout(() => {
            stop(
              new HatcheryError('TIMEOUT', `tool "${tool.name}" timed out after ${ms} ms`, {
                node: where.node,
                tool: tool.ref,
              }),
            );
          }, ms)
        : undefined;
    // A pending tool call keeps the process alive by itself; its timeout must not.
    timer?.unref();
    // Through watchAbort: the calls of a fan-out's branches share one listener on its signal. The
    // call's synchronous start may have cancelled the run already.
    const cancel = () => stop(abortedError(signal)!);
    const unwatch = signal.aborted ? undefined : watchAbort(signal, cancel);
    const finish = (): void => {
      done = true;
      clearTimeout(timer);
      unwatch?.();
    };
    if (signal.aborted) cancel();
    pending.then(
      (res) => {
        if (done) return;
        finish();
        resolve(res);
      },
      (err: unknown) => {
        if (done) return;
        finish();
        reject(err);
      },
    );
  });
}

/** The longest delay setTimeout honours (2^31 - 1 ms). */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * Resolves a baneling's reference to exactly one tool and calls it; `args` may be built from the tool
 * (its schema).
 */
export async function callToolRef(
  scope: RunContext,
  node: string,
  ref: ToolRef,
  args:
    | Record<string, unknown>
    | ((tool: Tool, scope: RunContext) => Record<string, unknown> | Promise<Record<string, unknown>>),
  timeoutMs?: number,
): Promise<ToolResult> {
  const list = await scope.shared.services.resolveTools(ref, scope);
  const tool = list[0];
  if (list.length !== 1 || !tool) {
    throw new HatcheryError(
      'UNKNOWN_TOOL',
      `"${ref.ref}" stands for ${list.length} tools; a baneling calls one: name it as mcp:<server>/<tool>`,
      { field: 'tool_name' },
    );
  }
  const a = typeof args === 'function' ? await args(tool, scope) : args;
  return callTool(scope, node, tool, a, { timeoutMs });
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
