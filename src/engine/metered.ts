import { formatError, HatcheryError } from '../core/errors.js';
import type { ResolvedModel } from '../providers/resolve.js';
import {
  type ChatRequest,
  type ChatResponse,
  fullUsage,
  type Provider,
  type RetryInfo,
} from '../providers/types.js';
import type { RunContext, RunEvent } from './contracts.js';

type ModelCallEvent = Extract<RunEvent, { type: 'model_call' }>;

/** What a model_call event says of the call's end: its answer or its error. */
type ModelCallFields = Pick<ModelCallEvent, 'text' | 'toolCalls' | 'stopReason' | 'usage' | 'error'>;

/**
 * The provider of a resolved model as a run uses it: each call is checked against the run tree's
 * budget before it starts, priced and counted when it ends, and reported as a model_call event (and
 * its retries as model_retry events) when someone listens.
 */
export function metered(scope: RunContext, resolved: ResolvedModel, node: string): Provider {
  return {
    id: resolved.provider.id,
    async chat(req: ChatRequest): Promise<ChatResponse> {
      const shared = scope.shared;
      shared.meter.beforeModelCall(scope.hatchery.file, node);
      const durable = shared.durable;
      let res: ChatResponse;
      if (durable === undefined) {
        res = await call(req);
      } else {
        // A call the engine answers from its checkpoint is neither reported nor made again; its
        // tokens still count against the run's budget (the step keeps what it spent).
        res = await durable.step('model', () => call(req));
      }
      if (res.toolCalls.length > 0) checkToolsOffered(req, res, node);
      return res;
    },
  };

  /** Makes the call: counted, priced and reported when it ends. */
  async function call(req: ChatRequest): Promise<ChatResponse> {
    const shared = scope.shared;
    const emit = shared.emit;
    const report = emit === undefined ? undefined : new CallReport(scope, emit, resolved, node, req);
    let res: ChatResponse;
    try {
      res = await resolved.provider.chat(req);
    } catch (err) {
      report?.send({ error: formatError(err) }, err instanceof HatcheryError ? err.code : undefined);
      throw err;
    }
    // The one shape every usage of a run has, counted and priced by the meter.
    const u = res.usage;
    const usage = fullUsage(u.inputTokens, u.outputTokens, u.cachedInputTokens, u.costUsd);
    shared.meter.afterModelCall(resolved.vendor, req.model, usage);
    res.usage = usage;
    report?.send({ text: res.text, toolCalls: res.toolCalls, stopReason: res.stopReason, usage });
    return res;
  }
}

/** The events of one model call while someone listens: a model_retry per retry, then its model_call. */
class CallReport {
  private readonly t0 = performance.now();
  private readonly step: number;
  /** A spawned agent's calls sit under the spawn_agent call that started it. */
  private readonly call: number | undefined;
  /** The request as sent, its messages copied now: a tool loop appends to the list it sends. */
  private readonly request: ChatRequest;
  private retries = 0;

  constructor(
    private readonly scope: RunContext,
    private readonly emit: (event: RunEvent) => void,
    private readonly resolved: ResolvedModel,
    private readonly node: string,
    req: ChatRequest,
  ) {
    this.step = scope.step;
    this.call = scope.agent ? scope.parentCall : undefined;
    this.request = { ...req, messages: req.messages.slice() };
    // Set on the request itself: a tool loop sends a new one each turn, so each call sets its own.
    req.onRetry = (r: RetryInfo) => this.retry(r);
  }

  /** The fields that place both of the call's events: run, node, step and model. */
  private where() {
    return {
      runId: this.scope.shared.runId,
      hatchery: this.scope.hatchery.name,
      node: this.node,
      step: this.step,
      depth: this.scope.depth,
      vendor: this.resolved.vendor,
      model: this.request.model,
    };
  }

  private retry(r: RetryInfo): void {
    this.retries = r.attempt;
    const event: Extract<RunEvent, { type: 'model_retry' }> = {
      type: 'model_retry',
      ...this.where(),
      ...r,
    };
    if (this.call !== undefined) event.call = this.call;
    this.emit(event);
  }

  /** The model_call event of the call's answer or error (and its error's code). */
  send(fields: ModelCallFields, code?: string): void {
    const t1 = performance.now();
    const event: ModelCallEvent = {
      type: 'model_call',
      ...this.where(),
      request: this.request,
      ms: t1 - this.t0,
      ...fields,
      ts: t1,
    };
    if (code !== undefined) event.code = code;
    if (this.call !== undefined) event.call = this.call;
    if (this.retries > 0) event.retries = this.retries;
    if (this.resolved.standIn !== undefined) event.standIn = this.resolved.standIn;
    this.emit(event);
  }
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
