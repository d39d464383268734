import type { ProviderFactory } from './resolve.js';
import type { ChatRequest, ChatResponse, Provider } from './types.js';
import { vendorInfo } from './vendors.js';

/** Default per-call timeout of model calls, in milliseconds. */
const DEFAULT_MODEL_TIMEOUT_MS = 300_000;

/**
 * The default factory: real SDK clients, imported on the first call (the vendor's `load`) so that the
 * CLI starts fast and hatcheries without drones never load the SDKs.
 */
export const sdkFactory: ProviderFactory = (vendor, { apiKey, baseURL, maxReplyBytes }) => {
  let loading: Promise<Provider> | undefined;
  const load = async (): Promise<Provider> => {
    const create = await vendorInfo(vendor).load();
    return create({ apiKey, baseURL, timeoutMs: DEFAULT_MODEL_TIMEOUT_MS, maxReplyBytes });
  };
  return {
    id: vendor,
    async chat(request: ChatRequest): Promise<ChatResponse> {
      loading ??= load();
      return (await loading).chat(request);
    },
  };
};
