/**
 * What model calls cost. The built-in table holds the vendors' current models (VENDORS); a file's
 * `prices` and the CLI's `--prices FILE` override it (see priceLookup).
 */
import { readFileSync } from 'node:fs';
import { HatcheryError } from '../core/errors.js';
import { type PricesDef, pricesSchema } from '../schema/budget.js';
import { listPrice, type Price } from './types.js';
import { findVendor, VENDORS } from './vendors.js';

export type { Price } from './types.js';

/** Looks up the price of a model; undefined when it is not known (the model is counted in tokens only). */
export type PriceLookup = (vendor: string, model: string) => Price | undefined;

/** Prices by "vendor:model". */
export type PriceTable = Readonly<Record<string, Price>>;

/** Dollars with four decimals below a cent (model calls are cheap), two above. */
export function usd(n: number): string {
  return `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`;
}

/** The vendors' built-in list prices (providers/*-vendor.ts), by "vendor:model". */
export const BUILTIN_PRICES: PriceTable = Object.fromEntries(
  VENDORS.flatMap((v) => Object.entries(v.prices).map(([model, price]) => [`${v.id}:${model}`, price])),
);

// Snapshot ids carry a date (claude-sonnet-5-5-20260101, gpt-5.4-mini-2026-03-17): priced as their base.
const DATED = /-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

function find(table: PriceTable, vendor: string, model: string): Price | undefined {
  const key = `${vendor}:${model}`;
  if (Object.hasOwn(table, key)) return table[key];
  if (DATED.test(model)) {
    const base = `${vendor}:${model.replace(DATED, '')}`;
    if (Object.hasOwn(table, base)) return table[base];
  }
  const alias = findVendor(vendor)?.priceAlias?.(model);
  if (alias !== undefined && Object.hasOwn(table, `${vendor}:${alias}`)) return table[`${vendor}:${alias}`];
  return undefined;
}

/**
 * The price of a model: the first table (most specific first: --prices, then the file's `prices`)
 * that knows it, else the built-in table; undefined for unknown models.
 */
export function priceLookup(...overrides: (PriceTable | undefined)[]): PriceLookup {
  const tables = overrides.filter((t): t is PriceTable => t !== undefined && Object.keys(t).length > 0);
  tables.push(BUILTIN_PRICES);
  return (vendor, model) => {
    for (const t of tables) {
      const p = find(t, vendor, model);
      if (p) return p;
    }
    return undefined;
  };
}

/** A price table as written (`cached_input`) in the runtime's form. */
export function toPriceTable(def: PricesDef): PriceTable {
  const out: Record<string, Price> = Object.create(null);
  for (const [key, v] of Object.entries(def)) {
    out[key] =
      v.cached_input === undefined
        ? { input: v.input, output: v.output }
        : listPrice(v.input, v.cached_input, v.output);
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
