import { randomUUID } from 'node:crypto';
import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  RequestId,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';
import { LinkedController } from '../core/cancel.js';
import { HatcheryError } from '../core/errors.js';
import { type TraceContext, traceContext } from '../core/trace.js';
import { createSamplingProvider } from '../providers/sampling.js';
import type { Provider } from '../providers/types.js';
import { resumeRun } from './background.js';
import { type CallEnv, errorResult, runHatcheryCall } from './calls.js';
import { canElicitForm, completeInputs, type ElicitFn, guardForm } from './elicit.js';
import { maybeTask } from './ext-tasks/handlers.js';
import { GENERIC_TOOL_NAMES, genericTool } from './generic/tools.js';
import { callWithHandoff } from './handoff.js';
import type { ServerHost } from './host.js';
import { answerRun, askRun, modernInputs, takesForms } from './input-required.js';
import type { RegistryEntry } from './registry.js';
import { ownRun, sessionRuns } from './run-access.js';
import type { BackgroundRun } from './runs.js';
import { hatcheryArgs, unknownName, withInputs } from './tool-defs.js';

// A session's tools/call handling, loaded on the first call or in the background once the first
// tools/list is answered (session.ts): answering initialize and tools/list needs none of it.

/** How long the user gets to answer an elicitation form, in milliseconds. */
const ELICIT_TIMEOUT_MS = 600_000;

/**
 * Whether the session speaks 2026-07-28 or later, which has no requests from server to client
 * (sampling, elicitation): questions go back as input_required results instead.
 */
function pushless(server: Server): boolean {
  const v = server.getNegotiatedProtocolVersion();
  return v !== undefined && v >= '2026';
}

/** The client's model as a provider, when the client declared sampling; requests go with `related`. */
function samplingFor(server: Server, related: RequestId | undefined): Provider | undefined {
  if (pushless(server)) return undefined;
  const caps = server.getClientCapabilities();
  if (!caps?.sampling) return undefined;
  return createSamplingProvider({
    supportsTools: caps.sampling.tools !== undefined,
    createMessage: (params, o) =>
      server.createMessage(params, { signal: o.signal, timeout: o.timeout, relatedRequestId: related }),
  });
}

function elicitFor(core: ServerHost, server: Server, related: RequestId | undefined): ElicitFn | undefined {
  if (pushless(server) || !canElicitForm(server.getClientCapabilities())) return undefined;
  return (params, signal) => {
    const safe = guardForm(core.out, params);
    return server.elicitInput(safe, { signal, timeout: ELICIT_TIMEOUT_MS, relatedRequestId: related });
  };
}

/**
 * Starts a hatchery run in the background (hatchery_start, task-augmented calls): arguments are
 * checked and missing inputs asked for while the request is still open; then the run goes on its
 * own, cancelled only by hatchery_cancel, tasks/cancel or shutdown.
 */
async function startBackground(
  core: ServerHost,
  server: Server,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  request: { signal: AbortSignal; id: RequestId; trace?: TraceContext },
): Promise<BackgroundRun> {
  const { signal: requestSignal, id: related, trace } = request;
  const h = entry.hatchery;
  const { input, vars } = hatcheryArgs(h, args);
  const full = await completeInputs(h, vars, elicitFor(core, server, related), requestSignal);
  const runArgs = withInputs(full, input);
  const controller = new LinkedController(core.signal);
  // No related request: the one that started the run is answered before the run needs the client.
  const sampling = samplingFor(server, undefined);
  let queued!: () => void;
  const waiting = new Promise<void>((r) => {
    queued = r;
  });
  const run = core.runs.start({ hatchery: h.name, file: h.file }, controller, (signal, onEvent, runId) =>
    runHatcheryCall(core, entry, runArgs, {
      signal,
      onEvent,
      sampling,
      runId,
      source: 'background',
      trace,
      onQueued: queued,
    }),
  );
  ownRun(server, run.id);
  // done never rejects: the run's failures are its outcome.
  run.done.then(() => controller.unlink());
  if (core.runtime.engine) {
    // Other replicas find a run in the database: its id is given once its journal is written there
    // (the read waits for that), unless it waits for a run slot first, known here only until then.
    await Promise.race([run.started, run.done, waiting]);
    if (run.state !== 'queued') await core.runtime.store?.read(run.id);
  }
  return run;
}

/**
 * Answers one tools/call of a session: a hatchery's run (a task when the client declares the tasks
 * extension and the run takes longer than --task-wait), a generic tool, or an unknown name's error.
 */
export async function handleCall(
  core: ServerHost,
  server: Server,
  request: CallToolRequest,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const req = ctx.mcpReq;
  const { name, arguments: args } = request.params;
  // The request's own signal is the run's: it fires on client cancellation, and closing the
  // session at shutdown fires it too, so calls need no controller of their own.
  const env: CallEnv = {
    signal: req.signal,
    trace: traceContext(req._meta),
    sampling: samplingFor(server, req.id),
    elicit: elicitFor(core, server, req.id),
  };
  const token = req._meta?.progressToken;
  if (token !== undefined) {
    env.progress = {
      token,
      send: (params) => req.notify({ method: 'notifications/progress', params: { ...params } }),
    };
  }
  const entry = core.registry.get(name);
  if (!entry) return otherTool(core, server, name, args, env, ctx);
  // The id is chosen here so that hatchery_runs lists the run to this session (and only to it).
  env.runId = randomUUID();
  ownRun(server, env.runId);
  let callArgs = args;
  // 2026-07-28 with forms: questions go back as input_required (env has no elicit or sampling there).
  const forms = takesForms(ctx);
  if (forms) {
    const state = req.requestState<string>();
    if (typeof state === 'string') return answerRun(core, entry, state, ctx);
    const completed = await modernInputs(core, entry, args, ctx).catch((err: unknown) => ({ error: err }));
    if ('error' in completed) return errorResult(core, completed.error);
    if ('ask' in completed) return completed.ask;
    callArgs = completed.args;
  }
  // Inputs asked first (synchronously, as the extension wants), then the run may become a task.
  // Without forms a question is answered with hatchery_respond, so it never becomes a task's form.
  const task = await maybeTask(core, entry, callArgs, env, { envelope: req.envelope, forms });
  if (task) return task;
  const answer = forms ? (run: Parameters<typeof askRun>[1]) => askRun(core, run) : undefined;
  if (core.syncWaitMs !== undefined)
    return callWithHandoff(core, entry, callArgs, env, { waitMs: core.syncWaitMs, answer });
  const outcome = await runHatcheryCall(core, entry, callArgs, env);
  return answer ? answer({ id: env.runId, ...outcome }) : outcome.result;
}

/** A call of a generic tool, or of a name nothing serves. */
async function otherTool(
  core: ServerHost,
  server: Server,
  name: string,
  args: Record<string, unknown> | undefined,
  env: CallEnv,
  ctx: ServerContext,
): Promise<CallToolResult> {
  const req = ctx.mcpReq;
  const generic = core.genericTools ? genericTool(name) : undefined;
  if (generic) {
    const r = await generic
      .call(args ?? {}, {
        core,
        signal: req.signal,
        call: (e, a) => {
          // The id is chosen here so that hatchery_runs lists the run to this session.
          const runId = randomUUID();
          ownRun(server, runId);
          return runHatcheryCall(core, e, a, { ...env, runId }).then((o) => o.result);
        },
        start: (e, a) =>
          startBackground(core, server, e, a, { signal: req.signal, id: req.id, trace: env.trace }),
        mine: sessionRuns(server),
        resume: (id, o, meta) => {
          ownRun(server, id);
          return resumeRun(core, id, o, meta, samplingFor(server, undefined));
        },
      })
      .catch((err: unknown) => errorResult(core, err));
    // Statuses, lists and stored results: one gate redacts and caps them all.
    return core.out.result(r);
  }
  const names = core.registry.entries().map((e) => e.name);
  const all = core.genericTools ? [...names, ...GENERIC_TOOL_NAMES] : names;
  const hint = core.genericTools ? ' (hatchery_list shows them all)' : '';
  return errorResult(core, new HatcheryError('NOT_FOUND', unknownName('tool', name, all, hint)));
}
