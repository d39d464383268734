import { HatcheryError } from '../core/errors.js';
import type { SdkProviderOptions } from './types.js';

/** Default cap of one model reply, decoded (8 MiB: far above any model's longest answer). */
const DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024;

/** The client options of either SDK for SdkProviderOptions: the reply cap on `fetch`, 2 retries by default. */
export function sdkClientOptions(options: SdkProviderOptions) {
  return {
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? 2,
    fetch: cappedFetch(fetch, options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES),
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  };
}

/**
 * Wraps the `fetch` a model SDK gets so that a reply's decoded body (after gzip or brotli, streamed
 * or not) ends with a PROVIDER error once it passes `maxBytes`, and the connection is let go: a
 * stream that never ends, or a small compressed body that inflates to gigabytes, cannot fill the
 * server's memory. Any fetch implementation works: only the Response body is wrapped.
 */
function cappedFetch(inner: typeof fetch, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    const body = res.body;
    if (body === null) return res;
    let seen = 0;
    const reader = body.getReader();
    const capped = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        seen += value.byteLength;
        if (seen > maxBytes) {
          // Cancelling the source ends the download; the reader gets the error instead of more data.
          reader.cancel().catch(() => {});
          controller.error(tooLarge(input, maxBytes));
          return;
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(capped, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** The error of a reply past the cap: the endpoint (never a key) and how to raise the limit. */
function tooLarge(input: Parameters<typeof fetch>[0], maxBytes: number): HatcheryError {
  const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  let endpoint = raw;
  try {
    const u = new URL(raw);
    endpoint = `${u.origin}${u.pathname}`;
  } catch {
    // Not a URL: shown as given, which an SDK never does.
  }
  return new HatcheryError(
    'PROVIDER',
    `the model's reply from ${endpoint} passed ${maxBytes} bytes (--max-reply-bytes) and was cut off; a reply that long is a broken or hostile endpoint, or raise the limit with --max-reply-bytes N`,
    { endpoint, limit: maxBytes },
  );
}
