/**
 * What model calls cost. The built-in table holds the current OpenAI and Anthropic models; a file's
 * `prices` and the CLI's `--prices FILE` override it (see priceLookup).
 */
import { readFileSync } from 'node:fs';
import { HatcheryError } from '../core/errors.js';
import { type PricesDef, pricesSchema } from '../schema/budget.js';

/** A model's price in US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Price of input tokens read from the prompt cache (default: the input price). */
  cachedInput?: number;
}

/** Looks up the price of a model; undefined when it is not known (the model is counted in tokens only). */
export type PriceLookup = (vendor: string, model: string) => Price | undefined;

/** Prices by "vendor:model". */
export type PriceTable = Readonly<Record<string, Price>>;

/** Dollars with four decimals below a cent (model calls are cheap), two above. */
export function usd(n: number): string {
  return `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`;
}

const p = (input: number, cachedInput: number, output: number): Price => ({ input, cachedInput, output });

/**
 * Standard (non-batch, short-context) list prices, USD per million tokens, taken on 2026-11-22 from
 * the vendors' pricing pages as mirrored by public price trackers. Prices change: a file's `prices`
 * and `--prices FILE` override any entry here. Anthropic cache writes are billed as plain input.
 */
export const BUILTIN_PRICES: PriceTable = {
  'openai:gpt-5.5': p(5, 0.5, 30),
  'openai:gpt-5.5-pro': p(30, 30, 180),
  'openai:gpt-5.4': p(2.5, 0.25, 15),
  'openai:gpt-5.4-pro': p(30, 30, 180),
  'openai:gpt-5.4-mini': p(0.75, 0.075, 4.5),
  'openai:gpt-5.4-nano': p(0.2, 0.02, 1.25),
  'openai:gpt-5.2': p(1.75, 0.175, 14),
  'openai:gpt-5.1': p(1.25, 0.125, 10),
  'openai:gpt-5': p(1.25, 0.125, 10),
  'openai:gpt-5-mini': p(0.25, 0.025, 2),
  'openai:gpt-5-nano': p(0.05, 0.005, 0.4),
  'openai:gpt-4.1': p(2, 0.5, 8),
  'openai:gpt-4.1-mini': p(0.4, 0.1, 1.6),
  'openai:gpt-4.1-nano': p(0.1, 0.025, 0.4),
  'openai:gpt-4o': p(2.5, 1.25, 10),
  'openai:gpt-4o-mini': p(0.15, 0.075, 0.6),
  'anthropic:claude-fable-5-1': p(10, 0.25, 50),
  'anthropic:claude-fable-5': p(10, 1, 50),
  'anthropic:claude-opus-5-5': p(4, 0.2, 20),
  'anthropic:claude-opus-5': p(5, 0.5, 25),
  'anthropic:claude-opus-4-8': p(5, 0.5, 25),
  'anthropic:claude-opus-4-7': p(5, 0.5, 25),
  'anthropic:claude-opus-4-6': p(5, 0.5, 25),
  'anthropic:claude-opus-4-5': p(5, 0.5, 25),
  'anthropic:claude-opus-4-1': p(15, 1.5, 75),
  'anthropic:claude-opus-4-0': p(15, 1.5, 75),
  'anthropic:claude-sonnet-5-5': p(2, 0.2, 10),
  'anthropic:claude-sonnet-5': p(2, 0.2, 10),
  'anthropic:claude-sonnet-4-6': p(3, 0.3, 15),
  'anthropic:claude-sonnet-4-5': p(3, 0.3, 15),
  'anthropic:claude-sonnet-4-0': p(3, 0.3, 15),
  'anthropic:claude-haiku-4-5': p(1, 0.1, 5),
  'anthropic:claude-3-5-haiku': p(0.8, 0.08, 4),
  'anthropic:claude-3-haiku': p(0.25, 0.03, 1.25),
};

// Snapshot ids carry a date (claude-sonnet-5-5-20260101, gpt-5.4-mini-2026-03-17): priced as their base.
const DATED = /-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

function find(table: PriceTable, vendor: string, model: string): Price | undefined {
  const key = `${vendor}:${model}`;
  if (Object.hasOwn(table, key)) return table[key];
  if (DATED.test(model)) {
    const base = `${vendor}:${model.replace(DATED, '')}`;
    if (Object.hasOwn(table, base)) return table[base];
  }
  // Anthropic's undated aliases: claude-opus-4 is claude-opus-4-0.
  if (vendor === 'anthropic' && /-\d$/.test(model)) {
    const zero = `${key}-0`;
    if (Object.hasOwn(table, zero)) return table[zero];
  }
  return undefined;
}

/**
 * The price of a model: the first table (most specific first: --prices, then the file's `prices`)
 * that knows it, else the built-in table; undefined for unknown models.
 */
export function priceLookup(...overrides: (PriceTable | undefined)[]): PriceLookup {
  const tables = overrides.filter((t): t is PriceTable => t !== undefined && Object.keys(t).length > 0);
  tables.push(BUILTIN_PRICES);
  // Every model call asks; a run uses few models, so each answer is kept (null: not known).
  const memo = new Map<string, Map<string, Price | null>>();
  return (vendor, model) => {
    let byModel = memo.get(vendor);
    if (!byModel) {
      byModel = new Map();
      memo.set(vendor, byModel);
    }
    let hit = byModel.get(model);
    if (hit === undefined) {
      hit = null;
      for (const t of tables) {
        const p = find(t, vendor, model);
        if (p) {
          hit = p;
          break;
        }
      }
      byModel.set(model, hit);
    }
    return hit ?? undefined;
  };
}

/** A price table as written (`cached_input`) in the runtime's form. */
export function toPriceTable(def: PricesDef): PriceTable {
  const out: Record<string, Price> = Object.create(null);
  for (const [key, v] of Object.entries(def)) {
    out[key] =
      v.cached_input === undefined
        ? { input: v.input, output: v.output }
        : p(v.input, v.cached_input, v.output);
  }
  return out;
}

/** Reads and validates a --prices file (`{ "vendor:model": {input, output, cached_input} }`). */
export function readPricesFile(file: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new HatcheryError('USAGE', `--prices ${file}: cannot read the file (${why})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new HatcheryError('USAGE', `--prices ${file}: not valid JSON (${why})`);
  }
  const parsed = pricesSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.map(String).join('/') ?? '';
    throw new HatcheryError(
      'USAGE',
      `--prices ${file}: ${at ? `"${at}": ` : ''}${issue?.message ?? 'invalid'}; expected {"vendor:model": {"input": N, "output": N, "cached_input": N}} in US dollars per million tokens`,
    );
  }
  return toPriceTable(parsed.data);
}
