import { formatError, HatcheryError } from '../core/errors.js';
import type { ResolvedModel } from '../providers/resolve.js';
import {
  type ChatRequest,
  type ChatResponse,
  fullUsage,
  type Provider,
  type RetryInfo,
  type Usage,
} from '../providers/types.js';
import type { NodeResult, RunContext, RunEvent, RunMeter } from './contracts.js';

type ModelCallEvent = Extract<RunEvent, { type: 'model_call' }>;

/**
 * The provider of a resolved model as a run uses it: each call is checked against the run tree's
 * budget before it starts, priced and counted when it ends, and reported as a model_call event when
 * someone listens. Nobody listening, a call costs one `then` more than the provider's own; no event,
 * copy or closure is built for it.
 */
export function metered(scope: RunContext, resolved: ResolvedModel, node: string): Provider {
  return {
    id: resolved.provider.id,
    chat: (req: ChatRequest): Promise<ChatResponse> => meteredChat(scope, resolved, node, req),
  };
}

/** One call of {@link metered}'s provider, without building the provider (a drone's single call). */
export function meteredChat(
  scope: RunContext,
  resolved: ResolvedModel,
  node: string,
  req: ChatRequest,
): Promise<ChatResponse> {
  const shared = scope.shared;
  const meter = shared.meter;
  meter.beforeModelCall(scope.hatchery.file, node);
  const emit = shared.emit;
  if (emit === undefined) {
    const vendor = resolved.vendor;
    return resolved.provider.chat(req).then((res) => {
      res.usage = priced(meter, vendor, req.model, res.usage);
      if (res.toolCalls.length > 0) checkToolsOffered(req, res, node);
      return res;
    });
  }
  return reported(scope, emit, resolved, node, req, false) as Promise<ChatResponse>;
}

/**
 * A node's whole work when it is one model call (a drone without tools, schema or choice): the
 * metered call whose answer is the node's result, built in the one `then` that prices it. `req` is
 * made for this call and never changed or sent again: while someone listens, its event holds it as is.
 */
export function meteredResult(
  scope: RunContext,
  resolved: ResolvedModel,
  node: string,
  req: ChatRequest,
): Promise<NodeResult> {
  const shared = scope.shared;
  const meter = shared.meter;
  meter.beforeModelCall(scope.hatchery.file, node);
  const emit = shared.emit;
  if (emit === undefined) {
    const vendor = resolved.vendor;
    return resolved.provider.chat(req).then((res): NodeResult => {
      const usage = priced(meter, vendor, req.model, res.usage);
      if (res.toolCalls.length > 0) checkToolsOffered(req, res, node);
      return { text: res.text, usage };
    });
  }
  return reported(scope, emit, resolved, node, req, true) as Promise<NodeResult>;
}

/**
 * A model call made while someone listens: the same metering, and one model_call event, answer or
 * error. `asResult` gives the answer as a node's result (see meteredResult) in the same `then`.
 */
function reported(
  scope: RunContext,
  emit: (event: RunEvent) => void,
  resolved: ResolvedModel,
  node: string,
  req: ChatRequest,
  asResult: boolean,
): Promise<ChatResponse | NodeResult> {
  const shared = scope.shared;
  const vendor = resolved.vendor;
  const t0 = performance.now();
  const step = scope.step;
  // A spawned agent's calls sit under the spawn_agent call that started it.
  const call = scope.agent ? scope.parentCall : undefined;
  // Copied now: a tool loop appends to the list it sends, and the journal hashes it later. A node's
  // single call (asResult) sends a request made for it and never changed after: the event holds it,
  // its onRetry cleared before anyone sees it, as a copy made before it was set would have it.
  const request = asResult ? req : { ...req, messages: req.messages.slice() };
  let retries = 0;
  // Set on the request itself (a tool loop sends the same object each turn, so each call sets its own):
  // a copy of the request per call would cost every call what only a retry needs.
  req.onRetry = (r: RetryInfo) => {
    retries = r.attempt;
    const event: Extract<RunEvent, { type: 'model_retry' }> = {
      type: 'model_retry',
      runId: shared.runId,
      hatchery: scope.hatchery.name,
      node,
      step,
      depth: scope.depth,
      vendor,
      model: req.model,
      ...r,
    };
    if (call !== undefined) event.call = call;
    emit(event);
  };
  const send = (event: ModelCallEvent) => {
    if (asResult) req.onRetry = undefined;
    if (call !== undefined) event.call = call;
    if (retries > 0) event.retries = retries;
    if (resolved.standIn !== undefined) event.standIn = resolved.standIn;
    emit(event);
  };
  const failed = (err: unknown): void => {
    const t1 = performance.now();
    const event: ModelCallEvent = {
      type: 'model_call',
      runId: shared.runId,
      hatchery: scope.hatchery.name,
      node,
      step,
      depth: scope.depth,
      vendor,
      model: req.model,
      request,
      ms: t1 - t0,
      error: formatError(err),
      ts: t1,
    };
    if (err instanceof HatcheryError) event.code = err.code;
    send(event);
  };
  let pending: Promise<ChatResponse>;
  try {
    pending = resolved.provider.chat(req);
  } catch (err) {
    failed(err);
    return Promise.reject(err);
  }
  // No async frame: one `then` for the answer or the error, as the quiet path.
  return pending.then(
    (res): ChatResponse | NodeResult => {
      const usage = priced(shared.meter, vendor, req.model, res.usage);
      res.usage = usage;
      const t1 = performance.now();
      send({
        type: 'model_call',
        runId: shared.runId,
        hatchery: scope.hatchery.name,
        node,
        step,
        depth: scope.depth,
        vendor,
        model: req.model,
        request,
        ms: t1 - t0,
        text: res.text,
        toolCalls: res.toolCalls,
        stopReason: res.stopReason,
        usage,
        ts: t1,
      });
      if (res.toolCalls.length > 0) checkToolsOffered(req, res, node);
      return asResult ? { text: res.text, usage } : res;
    },
    (err: unknown): never => {
      failed(err);
      throw err;
    },
  );
}

/**
 * Fails a call whose model asked for tools the request never offered: its text is then usually
 * empty, and passing that on as the node's output hid the mistake (a prompt that names a tool the
 * node lacks, a model that calls tools it was told of elsewhere).
 */
function checkToolsOffered(req: ChatRequest, res: ChatResponse, node: string): void {
  // With tools offered, the tool loop answers a call of another name itself (an error the model sees).
  if (req.tools !== undefined && req.tools.length > 0) return;
  const names = [...new Set(res.toolCalls.map((c) => c.name))];
  const list = names.map((n) => `"${n}"`).join(', ');
  throw new HatcheryError(
    'UNKNOWN_TOOL',
    `the model asked for the tool${names.length > 1 ? 's' : ''} ${list}, but this drone offers no tools: add ${names.length > 1 ? 'them' : 'it'} to the node's "tools" if it should use ${names.length > 1 ? 'them' : 'it'}, or say in the prompt that the answer is text`,
    { node, field: 'tools', tool: names[0] },
  );
}

/** A call's usage in the one shape every usage of a run has, counted and priced by the meter. */
function priced(meter: RunMeter, vendor: string, model: string, u: Usage): Usage {
  const usage = fullUsage(u.inputTokens, u.outputTokens, u.cachedInputTokens, u.costUsd);
  meter.afterModelCall(vendor, model, usage);
  return usage;
}
