/**
 * How `run` and `runs resume` run a hatchery and end: the view and Ctrl-C around the run, its output,
 * its exit code, and the --json object of a failure (with the totals of the failed run, which the
 * error itself does not carry).
 */
import { formatError, HatcheryError, ValidationError } from '../../core/errors.js';
import type { AskFn, RunListener } from '../../engine/contracts.js';
import { BudgetExhaustedError } from '../../engine/meter.js';
import type { RunResult, Runtime } from '../../runtime/runtime.js';
import { EXIT } from '../args.js';
import { suspended, ttyAsk } from '../ask-tty.js';
import { cancelOnInterrupt } from '../interrupt.js';
import { errorLine, printableJson, printErr, printOut } from '../print.js';
import { openRunView, type RunTotals, type ViewFlags } from './run-view.js';

/** How viewRun shows a run and what it prints. */
export interface ViewRunOptions {
  flags: ViewFlags;
  json: boolean;
  /** The run's name before its first event. */
  name?: string;
  /** Questions are asked on the terminal; without one the run suspends at a question (exit 4). */
  terminal: boolean;
  /** The state folder of the run's journal, for the command that answers it; undefined: none. */
  location: string | undefined;
  /** The run's id when it is known before it starts (a resume). */
  runId?: string;
  /** The --json object of a run that succeeded. */
  jsonOf: (result: RunResult) => Record<string, unknown>;
}

/**
 * Runs `start` with the view the flags ask for, the first Ctrl-C cancelling it (a second one kills at
 * once), prints its output or its failure, closes the runtime; returns the exit code.
 */
export async function viewRun(
  runtime: Runtime,
  o: ViewRunOptions,
  start: (run: {
    ask: AskFn | undefined;
    signal: AbortSignal;
    onEvent: RunListener | undefined;
  }) => Promise<RunResult>,
): Promise<number> {
  const view = await openRunView({ ...o.flags, totals: o.json }, { name: o.name });
  const { controller, dispose } = cancelOnInterrupt();
  try {
    const ask = view.ask(o.terminal ? ttyAsk() : undefined);
    const result = await start({ ask, signal: controller.signal, onEvent: view.onEvent });
    view.close();
    const text = result.output.endsWith('\n') ? result.output : `${result.output}\n`;
    printOut(o.json ? `${printableJson(o.jsonOf(result))}\n` : text);
    return EXIT.OK;
  } catch (err) {
    view.close();
    if (err instanceof HatcheryError && err.code === 'INPUT_REQUIRED' && !controller.signal.aborted)
      return suspended(err, o.json, o.location);
    // With --events the run_end event holds the error: stderr stays JSON lines only.
    const told = o.flags.events === true && view.totals().ms !== undefined;
    if (!told) printErr(errorLine(err));
    if (err instanceof BudgetExhaustedError && !o.json && !told) printErr(partialText(err.partial));
    if (o.json) printOut(`${printableJson(failureJson(err, { runId: o.runId, ...view.totals() }))}\n`);
    // Ctrl-C, or `runs cancel` from another process (through the journal): 130; a budget: 5.
    return failureExit(err, controller.signal.aborted);
  } finally {
    // Still listening while MCP servers close: a signal now must not kill us before their trees.
    await runtime.close();
    dispose();
  }
}

/** The partial outputs of a run the budget stopped, for stderr: one block per finished node. */
function partialText(partial: Record<string, unknown>): string {
  const keys = Object.keys(partial);
  if (keys.length === 0) return 'partial outputs: none (no node finished)\n';
  const blocks = keys.map((k) => {
    const v = partial[k];
    const text = typeof v === 'string' ? v : printableJson(v);
    return `--- ${k}\n${text.endsWith('\n') ? text : `${text}\n`}`;
  });
  return `partial outputs (${keys.length} node${keys.length === 1 ? '' : 's'} finished):\n${blocks.join('')}`;
}

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
