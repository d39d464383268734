import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { type CallEnv, runHatcheryCall } from './calls.js';
import type { ServerHost } from './host.js';
import type { RegistryEntry } from './registry.js';
import { jsonResult } from './results.js';
import type { BackgroundRun } from './runs.js';

/** How long callWithHandoff waits, and how it records, hands off and answers a run. */
export interface HandoffOptions {
  /** Longest wait for the run, in ms (0: hand off at once; Infinity: never). */
  waitMs: number;
  /** The answer of a run handed off: a run-id handle by default, a task for the tasks extension. */
  handoff?: (run: BackgroundRun, entry: RegistryEntry) => CallToolResult | Promise<CallToolResult>;
  /** The answer of a run that ended in time (default: its result). */
  answer?: (run: BackgroundRun) => CallToolResult | InputRequiredResult;
  /** The run's journal `source` (default `mcp`; tasks are `task`). */
  source?: string;
  /** Hand off a run that suspended at a question too (a task waits for tasks/update); default false. */
  suspended?: boolean;
}

/**
 * Runs a hatchery call as a background run and waits for it up to `waitMs`. A run that ends in
 * time answers the call with `answer(run)` (and is forgotten: nobody will poll for it). A run still
 * going is handed off: it is no longer tied to the call's request (a client timing out does not
 * cancel it), its progress notifications stop, and the call is answered by `handoff`. Before the
 * handoff, cancelling the request cancels the run.
 */
export async function callWithHandoff(
  core: ServerHost,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  env: CallEnv,
  options: HandoffOptions,
): Promise<CallToolResult | InputRequiredResult> {
  // Until the handoff the request's signal is the run's (closing the session at shutdown fires it,
  // and shutdown cancels every run of core.runs anyway): no listener per call on the one shutdown
  // signal, which hundreds of calls in flight would share. A run handed off is linked to it then.
  const controller = new AbortController();
  // A call that arrives while the server shuts down is cancelled at once, as before.
  if (core.signal.aborted) controller.abort(core.signal.reason);
  const unfollowRequest = follow(env.signal, controller);
  let handedOff = false;
  const progress = env.progress;
  const callEnv: CallEnv = {
    ...env,
    // Notifications about a request already answered would be noise (or an error) to the client.
    progress: progress && {
      token: progress.token,
      send: (p) => (handedOff ? Promise.resolve() : progress.send(p)),
    },
  };
  const h = entry.hatchery;
  const { waitMs, handoff = handle, answer = (r: BackgroundRun) => r.result! } = options;
  const source = options.source ?? 'mcp';
  const run = core.runs.start(
    { hatchery: h.name, file: h.file, source },
    controller,
    (signal, onEvent, runId) =>
      runHatcheryCall(core, entry, args, { ...callEnv, signal, onEvent, runId, source }),
    // The id the session chose (and lists the run under), if it chose one.
    env.runId,
  );
  let timer: NodeJS.Timeout | undefined;
  const ended =
    waitMs > 0 &&
    (await Promise.race([
      run.done.then(() => true),
      new Promise<boolean>((r) => {
        // An infinite wait sets no timer (setTimeout would fire at once).
        if (Number.isFinite(waitMs)) timer = setTimeout(() => r(false), waitMs);
      }),
    ]));
  clearTimeout(timer);
  unfollowRequest();
  if (ended && !(options.suspended && run.state === 'input_required')) {
    core.runs.forget(run.id);
    return answer(run);
  }
  handedOff = true;
  const unfollow = follow(core.signal, controller);
  run.note = `handed off after ${Math.round(waitMs / 1000)} s: the tool call returned its run id`;
  run.done.then(unfollow, unfollow);
  return handoff(run, entry);
}

/** Aborts `controller` when `signal` fires (at once if it has); the function returned stops listening. */
export function follow(signal: AbortSignal, controller: AbortController): () => void {
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The answer of a call handed off: the run id, where it is, and how to get the result. */
function handle(run: BackgroundRun, entry: RegistryEntry): CallToolResult {
  const value = {
    status: 'running',
    run_id: run.id,
    hatchery: run.hatchery,
    ...(run.node ? { current_node: run.node } : {}),
    steps: run.steps,
    next_step: `call hatchery_result with {"run_id": "${run.id}"} to wait for the result (repeat while it says "still running"); hatchery_status shows progress, hatchery_cancel stops the run`,
    note: `${run.hatchery} is still running, so this call returns before your client's timeout; the run goes on in the background`,
  };
  // A tool with an output schema has its result checked against it: the handle cannot be one.
  return jsonResult(value, { textOnly: entry.tool.outputSchema !== undefined });
}
