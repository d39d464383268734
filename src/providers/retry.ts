/**
 * Retries of the SDK-backed providers, done here rather than by the SDKs (called with maxRetries 0):
 * the SDKs' waits know nothing of the call's timeout (`retry-after: 10` with a 2 s timeout took 20 s)
 * and OpenAI's ignores cancellation and keeps the process alive. Same policy as the SDKs otherwise.
 */
import { HatcheryError } from '../core/errors.js';
import { type CallGuard, type ErrorMappingContext, toProviderError } from './errors.js';
import type { RetryInfo } from './types.js';

/** What the retry loop needs besides the attempt. */
export interface RetryContext extends ErrorMappingContext {
  guard: CallGuard;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Told of each retry before its wait (ChatRequest.onRetry). */
  onRetry?: (retry: RetryInfo) => void;
}

// Longest wait one timer can represent; longer retry-after values fall back to the default backoff, as in the SDKs.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The wait the server asked for (`retry-after-ms`, `retry-after` in seconds or as a date), if any. */
function askedWait(headers: { get(name: string): string | null } | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (ms > 0 && ms <= MAX_TIMER_MS) return ms;
  const after = headers?.get('retry-after');
  if (!after) return undefined;
  const seconds = Number.parseFloat(after);
  const wait = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000;
  return wait > 0 && wait <= MAX_TIMER_MS ? wait : undefined;
}

/** Exponential backoff with jitter: 0.5 s, 1 s, 2 s... at most 8 s (the SDKs' defaults). */
function backoff(retry: number): number {
  return Math.min(0.5 * 2 ** retry, 8) * (1 - Math.random() * 0.25) * 1000;
}

/** How long to wait before retrying after `err`, or undefined when it is not worth a retry. */
function retryWait(err: unknown, retry: number, ctx: RetryContext): number | undefined {
  const { classes } = ctx;
  if (err instanceof HatcheryError || err instanceof classes.APIUserAbortError) return undefined;
  // Each attempt gets all the time left, so an attempt that timed out leaves none for another.
  if (err instanceof classes.APIConnectionTimeoutError) return undefined;
  if (err instanceof classes.APIConnectionError) return backoff(retry);
  if (!(err instanceof classes.APIError)) return undefined;
  const { status, headers } = err as { status?: unknown; headers?: { get(name: string): string | null } };
  const says = headers?.get('x-should-retry');
  const retryable =
    says === 'true' ||
    (says !== 'false' &&
      typeof status === 'number' &&
      (status === 408 || status === 409 || status === 429 || status >= 500));
  if (!retryable) return undefined;
  return askedWait(headers) ?? backoff(retry);
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`;
}

/**
 * After the first attempt failed with `err`: retries `attempt` (given the milliseconds left) until one
 * succeeds, the failure is for good, or the call's deadline or cancellation ends it; resolves with the
 * value and the promise of the attempt that gave it. A retry whose wait would outlast the deadline is
 * not waited for. (The first attempt is the caller's own, so that a call that succeeds at once pays
 * for none of this.)
 */
export async function retryAfter<A extends Promise<unknown>>(
  err: unknown,
  attempt: (timeoutMs: number) => A,
  ctx: RetryContext,
): Promise<{ value: Awaited<A>; attempt: A }> {
  const { guard } = ctx;
  let failure = err;
  for (let retry = 0; ; retry++) {
    guard.check();
    const wait = retry < ctx.maxRetries ? retryWait(failure, retry, ctx) : undefined;
    if (wait === undefined) throw failure;
    if (wait >= guard.remaining()) {
      const why = toProviderError(failure, ctx).message;
      throw new HatcheryError(
        'TIMEOUT',
        `${ctx.vendor} call timed out after ${ctx.timeoutMs} ms: the retry after "${why}" would start in ${seconds(wait)}, later than the timeout allows (raise timeout_ms to wait for it)`,
        { timeoutMs: ctx.timeoutMs },
      );
    }
    if (ctx.onRetry) {
      const status = (failure as { status?: unknown }).status;
      ctx.onRetry({
        attempt: retry + 1,
        waitMs: wait,
        reason: toProviderError(failure, ctx).message,
        rateLimited: status === 429,
      });
    }
    await guard.sleep(wait);
    const left = guard.remaining();
    try {
      const next = attempt(Number.isFinite(left) ? Math.max(1, Math.ceil(left)) : ctx.timeoutMs);
      return { value: (await guard.race(next)) as Awaited<A>, attempt: next };
    } catch (e) {
      failure = e;
    }
  }
}
