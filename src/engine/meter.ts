import type { ErrorContext } from '../core/errors.js';
import type { Usage } from '../providers/types.js';
import type { RunMeter } from './contracts.js';

/** A model's price in US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Price of input tokens read from the prompt cache (default: the input price). */
  cachedInput?: number;
}

/** Looks up the price of a model; undefined when it is not known (the model is counted in tokens only). */
export type PriceLookup = (vendor: string, model: string) => Price | undefined;

/** Limits of a run tree; each one left out is unlimited. */
export interface Budget {
  tokens?: number;
  cost_usd?: number;
  tool_calls?: number;
  model_calls?: number;
  wall_ms?: number;
}

/** What a run tree has spent so far. */
export interface Spend {
  tokens: number;
  costUsd: number;
  toolCalls: number;
  modelCalls: number;
}

/** The cost of one call's usage at `price`, in US dollars. */
export function costOf(usage: Usage, price: Price): number {
  const cached = usage.cachedInputTokens ?? 0;
  const fresh = usage.inputTokens - cached;
  return (
    (fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.outputTokens * price.output) /
    1_000_000
  );
}

/** The meter of one run tree: counts spend, prices model calls, enforces a budget (none by default). */
export class Meter implements RunMeter {
  readonly spend: Spend = { tokens: 0, costUsd: 0, toolCalls: 0, modelCalls: 0 };

  constructor(
    readonly price: PriceLookup,
    readonly budget: Budget | undefined = undefined,
  ) {}

  beforeModelCall(_where: ErrorContext): void {
    // Budget enforcement: see the budget issue's implementation.
  }

  afterModelCall(vendor: string, model: string, usage: Usage): void {
    const s = this.spend;
    s.modelCalls++;
    s.tokens += usage.inputTokens + usage.outputTokens;
    const p = this.price(vendor, model);
    if (p !== undefined) {
      const cost = costOf(usage, p);
      usage.costUsd = cost;
      s.costUsd += cost;
    }
  }

  beforeToolCall(_where: ErrorContext): void {
    this.spend.toolCalls++;
  }
}
