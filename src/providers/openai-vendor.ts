import { listPrice as p, type VendorInfo } from './types.js';

/**
 * OpenAI (and compatible servers at OPENAI_BASE_URL or a node's base_url). The default is a current
 * model: gpt-5 models take `max_completion_tokens` and no non-default temperature.
 */
export const OPENAI: VendorInfo<'openai'> = {
  id: 'openai',
  name: 'OpenAI',
  keyVar: 'OPENAI_API_KEY',
  baseUrlVar: 'OPENAI_BASE_URL',
  host: 'api.openai.com',
  defaultModel: 'gpt-5.4-mini',
  load: async () => (await import('./openai.js')).createOpenAIProvider,
  otelName: 'openai',
  textStop: 'stop',
  /**
   * Standard (non-batch, short-context) list prices, USD per million tokens (input, cached input,
   * output), taken on 2026-11-22 from the vendor's pricing page as mirrored by public price trackers.
   */
  prices: {
    'gpt-5.5': p(5, 0.5, 30),
    'gpt-5.5-pro': p(30, 30, 180),
    'gpt-5.4': p(2.5, 0.25, 15),
    'gpt-5.4-pro': p(30, 30, 180),
    'gpt-5.4-mini': p(0.75, 0.075, 4.5),
    'gpt-5.4-nano': p(0.2, 0.02, 1.25),
    'gpt-5.2': p(1.75, 0.175, 14),
    'gpt-5.1': p(1.25, 0.125, 10),
    'gpt-5': p(1.25, 0.125, 10),
    'gpt-5-mini': p(0.25, 0.025, 2),
    'gpt-5-nano': p(0.05, 0.005, 0.4),
    'gpt-4.1': p(2, 0.5, 8),
    'gpt-4.1-mini': p(0.4, 0.1, 1.6),
    'gpt-4.1-nano': p(0.1, 0.025, 0.4),
    'gpt-4o': p(2.5, 1.25, 10),
    'gpt-4o-mini': p(0.15, 0.075, 0.6),
  },
};
