/**
 * The budget and prices of one top-level run: its Meter, and when a budget is set, the run's own
 * abort controller (a spent limit or wall_ms stops every branch, model call and process tree) and a
 * record of the outputs of finished nodes, which the BUDGET_EXHAUSTED error carries.
 */
import { LinkedController } from '../core/cancel.js';
import { HatcheryError } from '../core/errors.js';
import type { Hatchery, RunEvent, RunListener, RunState } from '../engine/contracts.js';
import { type Budget, Meter, mergeBudgets } from '../engine/meter.js';
import { type PriceLookup, type PriceTable, priceLookup, toPriceTable } from '../providers/prices.js';

const lookups = new WeakMap<Hatchery, { runtime: PriceTable | undefined; lookup: PriceLookup }>();

/** The price lookup of runs of `h`: --prices, then the file's `prices`, then the built-in table (cached per file). */
export function pricesFor(h: Hatchery, runtime: PriceTable | undefined): PriceLookup {
  const hit = lookups.get(h);
  if (hit && hit.runtime === runtime) return hit.lookup;
  const own = h.def.prices ? toPriceTable(h.def.prices) : undefined;
  const lookup = priceLookup(runtime, own);
  lookups.set(h, { runtime, lookup });
  return lookup;
}

/** The metering of one top-level run. */
export interface RunBudget {
  meter: Meter;
  /** The run's signal: the caller's, or with a budget one that also ends when the budget does. */
  signal: AbortSignal;
  /** The run's listener, wrapped to record finished nodes when a budget is set. */
  emit: ((event: RunEvent) => void) | undefined;
  /** Stops the wall_ms timer and unlinks from the caller's signal. */
  end(): void;
  /** The error the run fails with: the budget's (with the partial outputs) when that stopped it. */
  failure(err: unknown): unknown;
}

const noEnd = (): void => {};
const asIs = (err: unknown): unknown => err;

/** Sets up the meter of a run of `h` with the smallest of the given budgets. */
export function runBudget(
  h: Hatchery,
  prices: PriceTable | undefined,
  budgets: (Budget | undefined)[],
  signal: AbortSignal,
  emit: RunListener | undefined,
): RunBudget {
  const price = pricesFor(h, prices);
  // Most runs have no budget at all: then no merge (and its spread) and no closures of their own.
  let some = h.def.budget !== undefined;
  for (const b of budgets) if (b !== undefined) some = true;
  const budget = some ? mergeBudgets(...budgets, h.def.budget) : undefined;
  if (budget === undefined) return { meter: new Meter(price), signal, emit, end: noEnd, failure: asIs };
  const controller = new LinkedController(signal);
  const meter = new Meter(price, budget, (err) => controller.abort(err));
  const timer =
    budget.wall_ms === undefined
      ? undefined
      : setTimeout(() => meter.exhaust('wall_ms', { file: h.file }), budget.wall_ms);
  const partial: Record<string, unknown> = {};
  const record = (e: RunEvent) => {
    if (e.type !== 'node_end') return;
    // Top-level nodes by name, branch nodes by their path, nested runs' nodes under their hatchery.
    const key = e.path ? `${e.path.slice(1)}/${e.node}` : e.depth > 0 ? `${e.hatchery}/${e.node}` : e.node;
    partial[key] = e.value !== undefined ? e.value : e.output;
  };
  return {
    meter,
    signal: controller.signal,
    emit: emit
      ? (e) => {
          record(e);
          emit(e);
        }
      : record,
    end() {
      if (timer) clearTimeout(timer);
      controller.unlink();
    },
    failure(err) {
      const exhausted = meter.exhausted;
      // Whatever a branch made of the abort, the run ended because the budget did.
      if (!exhausted || signal.aborted) return err;
      exhausted.partial = partial;
      return exhausted;
    },
  };
}

/** MAX_DEPTH when a nested run of `h` at `depth` goes over the run tree's nesting limit. */
export function checkDepth(shared: RunState, depth: number, h: Hatchery): void {
  if (depth > shared.maxDepth) {
    throw new HatcheryError(
      'MAX_DEPTH',
      `nested runs went ${depth} levels deep, over max_depth (${shared.maxDepth}); a hatchery or node that calls itself needs a condition that stops it`,
      { file: h.file, field: 'max_depth' },
    );
  }
}
