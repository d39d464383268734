import { z } from 'zod';
import { fileObject } from './object.js';

// Over 0: a zero budget would refuse every call; leave a limit out for none.
const positive = (what: string) => z.number().positive().describe(what);

/** `budget`: limits of one run tree (nested hatch: runs, branches, map items, spawned agents included). */
export const budgetSchema = fileObject({
  tokens: positive('Input plus output tokens of every model call of the run'),
  cost_usd: positive('Cost of the run in US dollars (models without a known price count as $0)'),
  tool_calls: positive('Tool calls of the run'),
  model_calls: positive('Model calls of the run'),
  wall_ms: positive('Time the run may take, in milliseconds; the run is stopped when it is over'),
}).partial();

const perMillion = (what: string) =>
  z.number().min(0, 'must be a price of 0 or more').describe(`${what}, US dollars per million tokens`);

/** One model's price, as written in a file or a --prices file. */
export const priceSchema = fileObject({
  input: perMillion('Input tokens'),
  output: perMillion('Output tokens'),
  cached_input: perMillion('Input tokens read from the prompt cache (default: the input price)').optional(),
});

/** `prices`: "vendor:model" to its price, overriding the built-in table. */
export const pricesSchema = z.record(z.string(), priceSchema).superRefine((table, ctx) => {
  for (const key of Object.keys(table)) {
    if (!/^[a-z]+:.+$/.test(key))
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: 'must be "vendor:model", e.g. "openai:gpt-5.4-mini"',
      });
  }
});

/** A budget as written. */
export type BudgetDef = z.infer<typeof budgetSchema>;
/** A price table as written. */
export type PricesDef = z.infer<typeof pricesSchema>;
