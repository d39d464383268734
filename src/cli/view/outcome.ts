/**
 * How a command that ran a hatchery ends: its exit code, and the --json object of a failure (with the
 * totals of the failed run, which the error itself does not carry).
 */
import { formatError, HatcheryError, ValidationError } from '../../core/errors.js';
import { BudgetExhaustedError } from '../../engine/meter.js';
import { EXIT } from '../args.js';
import type { RunTotals } from './run-view.js';

/**
 * The exit code of a run that threw `err`: 130 cancelled (Ctrl-C, SIGTERM, `runs cancel`), 5 budget
 * exhausted, 3 invalid file, 2 usage, 1 any other failure. INPUT_REQUIRED (4) is answered before this.
 */
export function failureExit(err: unknown, interrupted: boolean): number {
  const code = err instanceof HatcheryError ? err.code : undefined;
  if (interrupted || code === 'ABORTED') return EXIT.CANCELLED;
  if (err instanceof BudgetExhaustedError || code === 'BUDGET_EXHAUSTED') return EXIT.BUDGET;
  // Checks made as the run starts (js: tool arguments) are the file's problems, like the loader's.
  if (err instanceof ValidationError) return EXIT.INVALID;
  if (code === 'USAGE') return EXIT.USAGE;
  return EXIT.RUN_FAILED;
}

/**
 * The --json form of a failure: the error and its code, the run id and what the run used before it
 * failed (usage, cost, steps); BUDGET_EXHAUSTED adds the limit, the spend and the partial outputs.
 */
export function failureJson(err: unknown, totals: RunTotals): Record<string, unknown> {
  const out: Record<string, unknown> = { error: formatError(err) };
  if (err instanceof HatcheryError) out.code = err.code;
  const runId = totals.runId ?? (err instanceof HatcheryError ? err.context.runId : undefined);
  if (typeof runId === 'string') out.run_id = runId;
  if (totals.usage) {
    out.usage = totals.usage;
    out.cost_usd = totals.usage.costUsd;
  }
  if (totals.steps !== undefined) out.steps = totals.steps;
  if (err instanceof BudgetExhaustedError) {
    out.limit = err.context.limit;
    out.limit_value = err.context.limitValue;
    out.spent = err.context.spent;
    out.partial = err.partial;
  }
  return out;
}
