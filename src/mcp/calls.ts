import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { formatError, HatcheryError } from '../core/errors.js';
import type { TraceContext } from '../core/trace.js';
import type { AskRequest, RunListener } from '../engine/contracts.js';
import { BudgetExhaustedError } from '../engine/meter.js';
import type { Provider, Usage } from '../providers/types.js';
import type { RunResult, Runtime } from '../runtime/runtime.js';
import { completeInputs, type ElicitFn, elicitAsk } from './elicit.js';
import type { RunSlots } from './limiter.js';
import { MAX_ERROR_BYTES, type OutboundGuard } from './outbound.js';
import { ProgressReporter, type ProgressSender } from './progress.js';
import type { RegistryEntry } from './registry.js';
import { jsonResult, outputValue } from './results.js';
import { type RunOutcome, usageJson } from './runs.js';
import { hatcheryArgs } from './tool-defs.js';

/** What running a call needs from the server. */
export interface CallHost {
  readonly runtime: Runtime;
  readonly slots: RunSlots;
  /** Redacts and caps everything sent to clients. */
  readonly out: OutboundGuard;
  readonly heartbeatMs: number;
  /** Bookkeeping of runs in flight, so shutdown can wait for them. */
  runStarted(): void;
  runEnded(): void;
}

/** The per-call context: cancellation, and what this call's client offers. */
export interface CallEnv {
  /** Aborts the run (client cancellation, server shutdown). */
  signal: AbortSignal;
  /** Progress notifications, when the client sent a progress token. */
  progress?: { token: string | number; send: ProgressSender };
  /** The client's model, when it offers sampling. */
  sampling?: Provider;
  /** Asks the user for missing inputs, when the client supports elicitation. */
  elicit?: ElicitFn;
  /** Another listener of run events (background runs track their status with it). */
  onEvent?: RunListener;
  /** The run's id (a background run's, so its journal and hatchery_status agree). */
  runId?: string;
  /** Who started the run, for the journal (default `mcp`). */
  source?: string;
  /** The call's OpenTelemetry trace context (`_meta.traceparent`), kept with the run and passed on. */
  trace?: TraceContext;
  /** The caller's id of the conversation the run belongs to (an A2A context id), kept in the journal. */
  conversation?: string;
  /** Told when the run waits for a run slot (--max-concurrent, max_concurrent) before it starts. */
  onQueued?: () => void;
}

/**
 * `{ error, code }` of a thrown value: the message a user needs (file, node, field, cause), redacted
 * and capped; the code a HatcheryError's own, INTERNAL for anything else.
 */
function errorValue(out: OutboundGuard, err: unknown): Record<string, unknown> {
  return {
    error: out.text(formatError(err), MAX_ERROR_BYTES),
    code: err instanceof HatcheryError ? err.code : 'INTERNAL',
  };
}

/**
 * The error result of a failed call, `{ error, code }`: the message a user needs, with file, node
 * and cause (redacted, capped). `schema`: the tool declares an output schema, so the JSON goes in
 * the text block only.
 */
export function errorResult(host: Pick<CallHost, 'out'>, err: unknown, schema = false): CallToolResult {
  return failureResult(host, errorValue(host.out, err), schema);
}

/**
 * A failure's `{ error, code, ... }` as sent: in the text block only when the tool declares an
 * output schema (clients check any structured content against it), else structured too.
 */
export function failureResult(
  host: Pick<CallHost, 'out'>,
  value: Record<string, unknown>,
  schema: boolean,
  _meta?: Record<string, unknown>,
): CallToolResult {
  return host.out.result(jsonResult(value, { isError: true, textOnly: schema, _meta }), { schema });
}

/**
 * The error result of a run its budget stopped: `{ error, code, limit, limit_value, spent, partial }`
 * with the partial outputs of the nodes that finished; the limit and spending also in `_meta` under
 * hatchery/budget.
 */
function budgetResult(
  host: Pick<CallHost, 'out'>,
  err: BudgetExhaustedError,
  schema: boolean,
): CallToolResult {
  const value = {
    ...errorValue(host.out, err),
    limit: err.context.limit,
    limit_value: err.context.limitValue,
    spent: err.context.spent,
    partial: err.partial,
  };
  const spent = err.context.spent as Record<string, number> | undefined;
  const _meta = { 'hatchery/budget': { limit: value.limit, limit_value: value.limit_value, spent } };
  return failureResult(host, value, schema, _meta);
}

/** What a client needs to answer a suspended run: the question, its choices, the run id and the tool to call. */
function waitingText(err: HatcheryError): string {
  const q = err.context.question as AskRequest | undefined;
  const runId = typeof err.context.runId === 'string' ? err.context.runId : undefined;
  const lines = [
    q
      ? `INPUT_REQUIRED: node "${q.node}" ${q.kind === 'approve' ? 'waits for approval' : 'asks'}: ${q.question}`
      : `INPUT_REQUIRED: ${formatError(err)}`,
  ];
  if (q?.choices) lines.push(`choices: ${q.choices.join(', ')}`);
  if (q?.schema) lines.push(`the answer is JSON matching: ${JSON.stringify(q.schema)}`);
  if (runId) {
    lines.push(`run id: ${runId}`);
    lines.push(`answer it with the hatchery_respond tool: {"run_id": "${runId}", "answer": "<your answer>"}`);
  }
  return lines.join('\n');
}

/**
 * The answerable result of a run that waits for input (INPUT_REQUIRED): the question, the run id and
 * how to answer with hatchery_respond. What every client that takes no forms gets, in both eras.
 */
export function waitingResult(
  host: Pick<CallHost, 'out'>,
  err: HatcheryError,
  structured: boolean,
): CallToolResult {
  const value: Record<string, unknown> = {
    error: host.out.text(waitingText(err), MAX_ERROR_BYTES),
    code: err.code,
  };
  if (err.context.question !== undefined) value.question = err.context.question;
  if (typeof err.context.runId === 'string') {
    value.run_id = err.context.runId;
    value.next_step = 'answer with hatchery_respond {"run_id", "answer"}, then wait with hatchery_result';
  }
  return failureResult(host, value, structured);
}

/** Cap of one progress message, in bytes. */
const PROGRESS_BYTES = 1024;

/** One listener that tells both (either may be absent). */
export function combine(a: RunListener | undefined, b: RunListener | undefined): RunListener | undefined {
  if (!a) return b;
  if (!b) return a;
  return (e) => {
    a(e);
    b(e);
  };
}

/**
 * The outcome of a run that ended well: the object itself when the tool declares an output schema,
 * else `{ output, run_id, usage? }`; `_meta` carries the call's tokens and cost either way. A run
 * resumed from its journal gives `attempts`: `usage` is then the run's total, and
 * `usage_by_attempt` what each attempt spent (the last one is `result.usage`).
 */
export function succeeded(
  host: Pick<CallHost, 'out'>,
  result: RunResult,
  structured: boolean,
  attempts?: { total: Usage; each: readonly Usage[] },
): RunOutcome {
  const value = result.value;
  const u = attempts?.total ?? result.usage;
  const json = usageJson(u);
  const _meta: Record<string, unknown> = { 'hatchery/usage': json };
  const each = attempts?.each.map(usageJson);
  if (each) _meta['hatchery/usage_by_attempt'] = each;
  if (result.journal) _meta['hatchery/journal'] = result.journal;
  // Guarded here rather than when sent: background runs keep their result, so keep it small.
  if (structured && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const result = jsonResult(value as Record<string, unknown>, { _meta });
    return { state: 'succeeded', result: host.out.result(result, { schema: true }) };
  }
  // A final node with a non-object schema gives its value (a list, a number) rather than its JSON text.
  const output = value !== undefined && typeof value !== 'string' ? value : result.output;
  const usage = u.inputTokens === 0 && u.outputTokens === 0 ? undefined : json;
  const out = outputValue(output, result.runId, usage, result.journal);
  if (each && usage) out.usage_by_attempt = each;
  return { state: 'succeeded', result: host.out.result(jsonResult(out, { _meta })) };
}

/**
 * The outcome of a run that did not end well: cancelled, waiting for an answer, stopped by its
 * budget (with the partial outputs), or failed. `structured`: the tool declares an output schema.
 */
export function failed(
  host: Pick<CallHost, 'out'>,
  err: unknown,
  signal: AbortSignal,
  structured = false,
): RunOutcome {
  // ABORTED without our signal: cancelled through the run store (another replica, `runs cancel`).
  if (signal.aborted || (err instanceof HatcheryError && err.code === 'ABORTED'))
    return { state: 'cancelled', result: errorResult(host, err, structured) };
  if (err instanceof HatcheryError && err.code === 'INPUT_REQUIRED') {
    return {
      state: 'input_required',
      result: waitingResult(host, err, structured),
      question: err.context.question,
    };
  }
  if (err instanceof BudgetExhaustedError)
    return { state: 'failed', result: budgetResult(host, err, structured) };
  return { state: 'failed', result: errorResult(host, err, structured) };
}

/**
 * Runs one call of a hatchery with its own ctx: checks the arguments, asks for missing inputs,
 * waits for a run slot, runs, and turns the outcome into a tool result. Never rejects.
 */
export async function runHatcheryCall(
  host: CallHost,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  env: CallEnv,
): Promise<RunOutcome> {
  const h = entry.hatchery;
  const structured = entry.tool.outputSchema !== undefined;
  host.runStarted();
  let release: (() => void) | undefined;
  let reporter: ProgressReporter | undefined;
  try {
    const { input, vars } = hatcheryArgs(h, args);
    const allVars = await completeInputs(h, vars, env.elicit, env.signal);
    // The run's id is known before it starts: a slot shared by replicas is held in its name.
    const runId = env.runId ?? randomUUID();
    release = await host.slots.acquire(h, runId, env.signal, host.runtime.engine, env.onQueued);
    if (env.progress) {
      const send = env.progress.send;
      // Node names and labels come from the file: redacted and capped like everything sent.
      const guarded: ProgressSender = (p) =>
        send({ ...p, message: host.out.text(p.message, PROGRESS_BYTES) });
      reporter = new ProgressReporter(env.progress.token, guarded, host.heartbeatMs);
      reporter.start(`${h.name} started`);
    }
    const result = await host.runtime.run(h, {
      input,
      vars: allVars,
      signal: env.signal,
      onEvent: combine(reporter?.listener, env.onEvent),
      sampling: env.sampling,
      runId,
      source: env.source ?? 'mcp',
      trace: env.trace,
      conversation: env.conversation,
      // Without elicitation nobody can answer during the call: an ask node suspends the run instead.
      ask: env.elicit ? elicitAsk(env.elicit) : undefined,
    });
    return succeeded(host, result, structured);
  } catch (err) {
    return failed(host, err, env.signal, structured);
  } finally {
    release?.();
    host.runEnded();
    if (reporter) {
      reporter.stop();
      // SDK clients handle notifications a microtask late and drop those that trail the response
      // in the same read; one turn of the event loop lets the last progress arrive first.
      await new Promise((r) => setImmediate(r));
    }
  }
}
