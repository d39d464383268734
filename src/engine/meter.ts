import { type ErrorContext, HatcheryError } from '../core/errors.js';
import { type Price, type PriceLookup, usd } from '../providers/prices.js';
import { roundUsd, type Usage } from '../providers/types.js';
import type { BudgetDef } from '../schema/budget.js';
import type { RunMeter, SpendDelta } from './contracts.js';

export type { Price, PriceLookup } from '../providers/prices.js';

/** Limits of a run tree, as the file's `budget` has them; each one left out is unlimited. */
export type Budget = BudgetDef;

/** The names of the limits, as in the file's `budget` (the CLI flag is `--budget-<name with ->`). */
export type BudgetLimit = keyof Budget;

const LIMITS: readonly BudgetLimit[] = ['tokens', 'cost_usd', 'tool_calls', 'model_calls', 'wall_ms'];

/** What a run tree has spent so far, by limit; model_calls counts calls started (a failed one too). */
type Spend = Required<Omit<Budget, 'wall_ms'>>;

/** The cost of one call's usage at `price`, in US dollars. */
export function costOf(usage: Usage, price: Price): number {
  const cached = usage.cachedInputTokens ?? 0;
  const fresh = usage.inputTokens - cached;
  return roundUsd(
    (fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.outputTokens * price.output) /
      1_000_000,
  );
}

/** Each limit at its smallest value among `budgets` (the file's, the run's, the server's); undefined when none. */
export function mergeBudgets(...budgets: (Budget | undefined)[]): Budget | undefined {
  let out: Budget | undefined;
  for (const b of budgets) {
    if (!b) continue;
    for (const k of LIMITS) {
      const v = b[k];
      if (v === undefined) continue;
      out ??= {};
      const cur = out[k];
      out[k] = cur === undefined ? v : Math.min(cur, v);
    }
  }
  return out;
}

/** The BUDGET_EXHAUSTED failure; `partial` holds the outputs of the nodes that finished, by name or path. */
export class BudgetExhaustedError extends HatcheryError {
  /** Latest output of every node that finished before the budget ran out (set by the runtime). */
  partial: Record<string, unknown> = {};
  constructor(message: string, context: ErrorContext) {
    super('BUDGET_EXHAUSTED', message, context);
  }
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** The meter of one run tree: counts spend, prices model calls, enforces a budget (none by default). */
export class Meter implements RunMeter {
  readonly spend: Spend = { tokens: 0, cost_usd: 0, tool_calls: 0, model_calls: 0 };
  /** Set once a limit is reached; every later call is refused with it. */
  exhausted: BudgetExhaustedError | undefined;
  private readonly t0 = performance.now();
  /** The last model priced and its price (the lookup is fixed for the meter's life). */
  private lastVendor: string | undefined;
  private lastModel: string | undefined;
  private lastPrice: Price | undefined;
  observer: ((delta: SpendDelta) => void) | undefined;

  /**
   * `onExhausted` runs once, when a limit is first reached (the runtime aborts the run with the
   * error, so that parallel branches and calls in flight stop too).
   */
  constructor(
    readonly price: PriceLookup,
    readonly budget: Budget | undefined = undefined,
    private readonly onExhausted: ((err: BudgetExhaustedError) => void) | undefined = undefined,
  ) {}

  /** The spend as the error context and the MCP error result show it. */
  spent(): Required<Budget> {
    return { ...this.spend, wall_ms: Math.round(performance.now() - this.t0) };
  }

  /** Builds (once) and reports the error of limit `limit`. */
  exhaust(limit: BudgetLimit, where: ErrorContext = {}): BudgetExhaustedError {
    if (this.exhausted) return this.exhausted;
    const value = this.budget?.[limit] ?? 0;
    const spent = this.spent();
    const what =
      limit === 'cost_usd'
        ? `cost_usd ${usd(spent.cost_usd)} of ${usd(value)} spent`
        : limit === 'wall_ms'
          ? `wall_ms ${int(spent.wall_ms)} ms of ${int(value)} ms taken`
          : `${limit} ${int(spent[limit])} of ${int(value)} spent`;
    const others = (['tokens', 'model_calls', 'tool_calls'] as const)
      .filter((k) => k !== limit)
      .map((k) => `${k} ${int(spent[k])}`);
    if (limit !== 'cost_usd') others.push(`cost ${usd(spent.cost_usd)}`);
    const flag = `--budget-${limit.replace('_', '-')}`;
    const err = new BudgetExhaustedError(
      `budget exhausted: ${what} (${others.join(', ')}); raise budget.${limit} or ${flag}`,
      { ...where, limit, limitValue: value, spent },
    );
    this.exhausted = err;
    this.onExhausted?.(err);
    return err;
  }

  add(delta: SpendDelta): void {
    const s = this.spend;
    s.tokens += delta.tokens ?? 0;
    s.cost_usd = roundUsd(s.cost_usd + (delta.cost_usd ?? 0));
    s.model_calls += delta.model_calls ?? 0;
    s.tool_calls += delta.tool_calls ?? 0;
  }

  beforeModelCall(file: string, node: string): void {
    const b = this.budget;
    if (b === undefined) {
      this.spend.model_calls++;
      this.observer?.({ model_calls: 1 });
      return;
    }
    if (this.exhausted) throw this.exhausted;
    const s = this.spend;
    if (b.tokens !== undefined && s.tokens >= b.tokens) throw this.exhaust('tokens', { file, node });
    if (b.cost_usd !== undefined && s.cost_usd >= b.cost_usd) throw this.exhaust('cost_usd', { file, node });
    if (b.model_calls !== undefined && s.model_calls >= b.model_calls)
      throw this.exhaust('model_calls', { file, node });
    s.model_calls++;
    this.observer?.({ model_calls: 1 });
  }

  afterModelCall(vendor: string, model: string, usage: Usage): void {
    const s = this.spend;
    const tokens = usage.inputTokens + usage.outputTokens;
    s.tokens += tokens;
    // A run calls few models, most often the one it called last: that answer is kept.
    let p: Price | undefined;
    if (vendor === this.lastVendor && model === this.lastModel) p = this.lastPrice;
    else {
      p = this.price(vendor, model);
      this.lastVendor = vendor;
      this.lastModel = model;
      this.lastPrice = p;
    }
    if (p !== undefined) {
      const cost = costOf(usage, p);
      usage.costUsd = cost;
      s.cost_usd = roundUsd(s.cost_usd + cost);
    }
    this.observer?.({ tokens, cost_usd: usage.costUsd ?? 0 });
  }

  beforeToolCall(file: string, node: string, tool: string): void {
    const b = this.budget;
    if (b !== undefined) {
      if (this.exhausted) throw this.exhausted;
      if (b.tool_calls !== undefined && this.spend.tool_calls >= b.tool_calls)
        throw this.exhaust('tool_calls', { file, node, tool });
    }
    this.spend.tool_calls++;
    this.observer?.({ tool_calls: 1 });
  }
}
