import {
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type InputRequiredResult,
  inputRequired,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { formatError, HatcheryError } from '../core/errors.js';
import type { AskRequest } from '../engine/contracts.js';
import { isRunId } from '../journal/run-files.js';
import { resumeRun } from './background.js';
import { errorResult, failureResult } from './calls.js';
import { readStored } from './durable.js';
import { askAnswer, askForm, canElicitForm, completeInputs, type ElicitFn, guardForm } from './elicit.js';
import { claimsVersion, envelopeCapabilities } from './envelope.js';
import { follow } from './handoff.js';
import type { ServerHost } from './host.js';
import { MAX_ERROR_BYTES } from './outbound.js';
import type { RegistryEntry } from './registry.js';
import type { BackgroundRun } from './runs.js';
import { hatcheryArgs, withInputs } from './tool-defs.js';

/** Keys of the embedded requests this server sends. */
const INPUTS_KEY = 'inputs';
const ANSWER_KEY = 'answer';

/** Whether a request is a 2026-era one whose client takes forms (questions go back as input_required). */
export function takesForms(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope;
  return claimsVersion(envelope) && canElicitForm(envelopeCapabilities(envelope));
}

/** Thrown by the replaying asker when the answer has not arrived yet: the call returns its request. */
class NeedsInput extends Error {
  constructor(readonly params: ElicitRequestFormParams) {
    super('input required');
  }
}

/** An asker that answers from the retried request's responses, or asks for them (multi round-trip). */
function replaying(responses: Record<string, unknown> | undefined, key: string): ElicitFn {
  return async (params) => {
    const r = responses?.[key];
    if (r && typeof r === 'object' && 'action' in r) return r as ElicitResult;
    throw new NeedsInput(params);
  };
}

/** An input_required result asking one form (guarded like every form sent), with the request state. */
function asks(
  out: ServerHost['out'],
  key: string,
  form: Pick<ElicitRequestFormParams, 'message' | 'requestedSchema'>,
  state?: string,
): InputRequiredResult {
  const safe = guardForm(out, { mode: 'form', message: form.message, requestedSchema: form.requestedSchema });
  return inputRequired({
    inputRequests: {
      [key]: inputRequired.elicit({ message: safe.message, requestedSchema: safe.requestedSchema }),
    },
    ...(state ? { requestState: state } : {}),
  });
}

/**
 * The declared inputs a 2026-era call left out, asked with `input_required` and read from the
 * retried call's responses: the arguments with them filled in, or the request to return.
 */
export async function modernInputs(
  core: ServerHost,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  ctx: ServerContext,
): Promise<{ args: Record<string, unknown> | undefined } | { ask: InputRequiredResult }> {
  const h = entry.hatchery;
  const { input, vars } = hatcheryArgs(h, args);
  if (Object.keys(h.inputs).every((k) => vars[k] !== undefined)) return { args };
  try {
    const full = await completeInputs(
      h,
      vars,
      replaying(ctx.mcpReq.inputResponses, INPUTS_KEY),
      ctx.mcpReq.signal,
    );
    return { args: withInputs(full, input) };
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof NeedsInput) return { ask: asks(core.out, INPUTS_KEY, cause.params) };
    throw err;
  }
}

/**
 * The answer of a run that ended waiting for input, on a 2026 connection whose client takes forms:
 * the question as `input_required`, with the run id as the request state, so the retried call
 * resumes that run with the answer. Without a journal the run cannot be resumed: the waiting text.
 */
export function askRun(
  core: ServerHost,
  run: Pick<BackgroundRun, 'id' | 'state' | 'question' | 'result'>,
): CallToolResult | InputRequiredResult {
  const q = run.question as AskRequest | undefined;
  if (run.state !== 'input_required' || !q || !core.runtime.store) return run.result!;
  return asks(core.out, ANSWER_KEY, askForm(q), run.id);
}

/**
 * A retried 2026 call that answers a run's question: the run (named by the request state, checked
 * against the journal: it must wait for input, for this hatchery) resumes with the answer and the
 * call waits for it, asking again if it asks again. The request state is not secret-sealed on
 * purpose: like hatchery_respond, knowing a run's id is what it takes to answer it, and the id is
 * a random UUID; anything else in it is refused.
 */
export async function answerRun(
  core: ServerHost,
  entry: RegistryEntry,
  state: string,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  try {
    if (!isRunId(state)) throw new HatcheryError('USAGE', 'the request state is not a run id of this server');
    const stored = await readStored(core, state);
    if (stored.meta.hatchery !== entry.name) {
      throw new HatcheryError(
        'USAGE',
        `run ${state} is a run of ${stored.meta.hatchery}, not of ${entry.name}`,
      );
    }
    const q = stored.summary.question as AskRequest | undefined;
    if (stored.summary.status !== 'input_required' || !q) {
      throw new HatcheryError('USAGE', `run ${state} is ${stored.summary.status}, not waiting for an answer`);
    }
    const form = askForm(q);
    const response = ctx.mcpReq.inputResponses?.[ANSWER_KEY];
    if (!response || typeof response !== 'object' || !('action' in response))
      return asks(core.out, ANSWER_KEY, form, state);
    const answer = askAnswer(q, form, response as ElicitResult);
    const attempt = await core.runtime.prepareResume(state, { answer });
    const run = resumeRun(core, state, attempt, { hatchery: entry.name, file: entry.hatchery.file });
    run.note =
      'answered in the tool call (input_required); the nodes that had finished were taken from the run journal';
    const unfollow = follow(ctx.mcpReq.signal, run.controller);
    await run.done;
    unfollow();
    return askRun(core, run);
  } catch (err) {
    const schema = entry.tool.outputSchema !== undefined;
    if (err instanceof HatcheryError && (err.code === 'APPROVAL_DENIED' || err.code === 'DECLINED')) {
      const text = `${formatError(err)}; run ${state} still waits: hatchery_respond answers it, hatchery_cancel ends it`;
      const value = { error: core.out.text(text, MAX_ERROR_BYTES), code: err.code, run_id: state };
      return failureResult(core, value, schema);
    }
    return errorResult(core, err, schema);
  }
}
