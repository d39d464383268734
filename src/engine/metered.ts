import { formatError } from '../core/errors.js';
import type { ResolvedModel } from '../providers/resolve.js';
import type { ChatRequest, ChatResponse, Provider } from '../providers/types.js';
import type { RunContext, RunEvent } from './contracts.js';

type ModelCallEvent = Extract<RunEvent, { type: 'model_call' }>;

/**
 * The provider of a resolved model as a run uses it: each call is checked against the run tree's
 * budget before it starts, priced and counted when it ends, and reported as a model_call event when
 * someone listens. One small object per node execution; no event is built when nobody listens.
 */
export function metered(scope: RunContext, resolved: ResolvedModel, node: string): Provider {
  const inner = resolved.provider;
  const vendor = resolved.vendor;
  const shared = scope.shared;
  const meter = shared.meter;
  const where = { file: scope.hatchery.file, node };
  return {
    id: inner.id,
    async chat(req: ChatRequest): Promise<ChatResponse> {
      meter.beforeModelCall(where);
      const emit = shared.emit;
      const t0 = emit ? performance.now() : 0;
      // Copied now: a tool loop appends to the list it sends, and the journal hashes it later.
      const request = emit ? { ...req, messages: req.messages.slice() } : req;
      // One event per call, answer or error; built only when someone listens.
      const report = (emit: (e: RunEvent) => void, outcome: Partial<ModelCallEvent>) =>
        emit({
          type: 'model_call',
          runId: shared.runId,
          hatchery: scope.hatchery.name,
          node,
          depth: scope.depth,
          vendor,
          model: req.model,
          request,
          ms: performance.now() - t0,
          ...outcome,
        });
      let res: ChatResponse;
      try {
        res = await inner.chat(req);
      } catch (err) {
        if (emit) report(emit, { error: formatError(err) });
        throw err;
      }
      meter.afterModelCall(vendor, req.model, res.usage);
      if (emit) {
        const { text, toolCalls, stopReason, usage } = res;
        report(emit, { text, toolCalls, stopReason, usage });
      }
      return res;
    },
  };
}
