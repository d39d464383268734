import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatError, HatcheryError } from '../core/errors.js';
import type { AskRequest, RunListener } from '../engine/contracts.js';
import type { Provider } from '../providers/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { completeInputs, type ElicitFn, elicitAsk } from './elicit.js';
import type { Limiter } from './limiter.js';
import { MAX_ERROR_BYTES, type OutboundGuard } from './outbound.js';
import { ProgressReporter, type ProgressSender } from './progress.js';
import type { RegistryEntry } from './registry.js';
import type { RunOutcome } from './runs.js';
import { hatcheryArgs } from './tool-defs.js';

/** What running a call needs from the server. */
export interface CallHost {
  readonly runtime: Runtime;
  readonly limiter: Limiter;
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
}

/** A text tool result. */
export function textResult(text: string, isError = false): CallToolResult {
  return isError
    ? { content: [{ type: 'text', text }], isError: true }
    : { content: [{ type: 'text', text }] };
}

/** The error result of a failed call: the message a user needs, with file, node and cause (redacted, capped). */
export function errorResult(host: Pick<CallHost, 'out'>, err: unknown): CallToolResult {
  return textResult(host.out.text(formatError(err), MAX_ERROR_BYTES), true);
}

/** What a client needs to answer a suspended run: the question, its choices, the run id and the tool to call. */
export function waitingText(err: HatcheryError): string {
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

/** Cap of one progress message, in bytes. */
const PROGRESS_BYTES = 1024;

function hasMissing(declared: Readonly<Record<string, string>>, vars: Record<string, string>): boolean {
  for (const k in declared) if (vars[k] === undefined) return true;
  return false;
}

function combine(a: RunListener | undefined, b: RunListener | undefined): RunListener | undefined {
  if (!a) return b;
  if (!b) return a;
  return (e) => {
    a(e);
    b(e);
  };
}

/**
 * Runs one call of a hatchery with its own ctx: checks the arguments, asks for missing inputs,
 * waits for a run slot, runs, and turns the outcome into a tool result. Never throws.
 */
export async function runHatcheryCall(
  host: CallHost,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  env: CallEnv,
): Promise<RunOutcome> {
  const h = entry.hatchery;
  let release: (() => void) | undefined;
  let reporter: ProgressReporter | undefined;
  host.runStarted();
  try {
    const { input, vars } = hatcheryArgs(h, args);
    // The common cases (no declared input missing, no limit) take no extra await.
    const allVars = hasMissing(h.inputs, vars) ? await completeInputs(h, vars, env.elicit, env.signal) : vars;
    release = host.limiter.max === undefined ? undefined : await host.limiter.acquire(env.signal);
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
      // Without elicitation nobody can answer during the call: an ask node suspends the run instead.
      ask: env.elicit ? elicitAsk(env.elicit) : undefined,
    });
    const text = result.output;
    const value = result.value;
    // Guarded here rather than when sent: background runs keep their result, so keep it small.
    if (entry.tool.outputSchema && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return {
        state: 'succeeded',
        result: host.out.result({
          content: [{ type: 'text', text }],
          structuredContent: value as Record<string, unknown>,
        }),
      };
    }
    return { state: 'succeeded', result: host.out.result(textResult(text)) };
  } catch (err) {
    if (err instanceof HatcheryError && err.code === 'INPUT_REQUIRED' && !env.signal.aborted) {
      return { state: 'failed', result: textResult(host.out.text(waitingText(err), MAX_ERROR_BYTES), true) };
    }
    return { state: env.signal.aborted ? 'cancelled' : 'failed', result: errorResult(host, err) };
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
