import { listPrice as p, type VendorInfo } from './types.js';

/**
 * Anthropic. The default is a current model: the SDK prints a warning on every call to a model on its
 * deprecated list (test/models reads that list from the installed SDK).
 */
export const ANTHROPIC: VendorInfo<'anthropic'> = {
  id: 'anthropic',
  name: 'Anthropic',
  keyVar: 'ANTHROPIC_API_KEY',
  baseUrlVar: 'ANTHROPIC_BASE_URL',
  host: 'api.anthropic.com',
  defaultModel: 'claude-sonnet-5-5',
  barePrefix: 'claude-',
  load: async () => (await import('./anthropic.js')).createAnthropicProvider,
  otelName: 'anthropic',
  textStop: 'end_turn',
  /**
   * Standard (non-batch, short-context) list prices, USD per million tokens (input, cached input,
   * output), taken on 2026-11-22 from the vendor's pricing page as mirrored by public price trackers.
   * Cache writes are billed as plain input.
   */
  prices: {
    'claude-fable-5-1': p(10, 0.25, 50),
    'claude-fable-5': p(10, 1, 50),
    'claude-opus-5-5': p(4, 0.2, 20),
    'claude-opus-5': p(5, 0.5, 25),
    'claude-opus-4-8': p(5, 0.5, 25),
    'claude-opus-4-7': p(5, 0.5, 25),
    'claude-opus-4-6': p(5, 0.5, 25),
    'claude-opus-4-5': p(5, 0.5, 25),
    'claude-opus-4-1': p(15, 1.5, 75),
    'claude-opus-4-0': p(15, 1.5, 75),
    'claude-sonnet-5-5': p(2, 0.2, 10),
    'claude-sonnet-5': p(2, 0.2, 10),
    'claude-sonnet-4-6': p(3, 0.3, 15),
    'claude-sonnet-4-5': p(3, 0.3, 15),
    'claude-sonnet-4-0': p(3, 0.3, 15),
    'claude-haiku-4-5': p(1, 0.1, 5),
    'claude-3-5-haiku': p(0.8, 0.08, 4),
    'claude-3-haiku': p(0.25, 0.03, 1.25),
  },
  // Undated aliases of the 4.0 models: claude-opus-4 is claude-opus-4-0.
  priceAlias: (model) => (/-\d$/.test(model) ? `${model}-0` : undefined),
};
