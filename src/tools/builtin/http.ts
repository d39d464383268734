import { z } from 'zod';
import { HatcheryError, isAbortError } from '../../errors.js';
import { defineBuiltin } from './define.js';

/** Largest response body http_request returns; the rest is cut with a note. */
export const HTTP_LIMIT_BYTES = 200_000;

/** Reads at most `limit` bytes of a body, then cancels the rest of the download. */
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  if (!body) return { bytes: new Uint8Array(), cut: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > limit) {
      chunks.push(value.subarray(0, limit - size));
      size = limit;
      cut = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  return { bytes: Buffer.concat(chunks), cut };
}

/** http_request: GET or POST a URL and return the response body (capped). */
export const httpRequestTool = defineBuiltin({
  name: 'http_request',
  description: `Fetch a URL with GET or POST and return the response body as text (at most ${HTTP_LIMIT_BYTES} bytes). Non-2xx statuses are errors.`,
  schema: z.object({
    url: z.string().min(1).describe('http:// or https:// URL'),
    method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method (default GET)'),
    body: z.string().optional().describe('Request body (POST only)'),
    headers: z.record(z.string(), z.string()).optional().describe('Request headers'),
  }),
  async run({ url, method, body, headers }, tc) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new HatcheryError('TOOL', `http_request: "${url}" is not a valid URL`, { tool: 'http_request' });
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new HatcheryError(
        'TOOL',
        `http_request: only http and https URLs are allowed, not ${parsed.protocol}`,
        {
          tool: 'http_request',
        },
      );
    }
    if (body !== undefined && method === 'GET') {
      throw new HatcheryError('TOOL', 'http_request: a GET request has no body; use method "POST"', {
        tool: 'http_request',
      });
    }
    let res: Response;
    try {
      res = await fetch(parsed, { method, body, headers, signal: tc.signal, redirect: 'follow' });
    } catch (err) {
      if (isAbortError(err) || tc.signal.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new HatcheryError(
        'TOOL',
        `http_request: ${method} ${parsed.href} failed: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
        { tool: 'http_request' },
        { cause: err },
      );
    }
    const { bytes, cut } = await readCapped(res.body, HTTP_LIMIT_BYTES);
    let text = Buffer.from(bytes).toString('utf8');
    if (cut) text += `\n[response cut at ${HTTP_LIMIT_BYTES} bytes]`;
    if (!res.ok) return { text: `HTTP ${res.status} ${res.statusText}\n${text}`, isError: true };
    return text;
  },
});
