/**
 * Shared error handling of the SDK-backed providers: maps SDK errors to HatcheryErrors without leaking
 * credentials, and links each call to the caller's AbortSignal.
 */

import { abortedError, sleep, watchAbort } from '../core/cancel.js';
import { HatcheryError, isAbortError } from '../core/errors.js';
import { redactText } from '../core/secrets.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes of one SDK; passed in so this module never loads either SDK itself. */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIUserAbortError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
}

/** What the error mapping needs to know about the failed call. */
export interface ErrorMappingContext {
  /** Vendor name as shown to users: `OpenAI`, `Anthropic`. */
  vendor: string;
  classes: SdkErrorClasses;
  /** The key the call used; scrubbed from every message. */
  apiKey?: string;
  /** The call's timeout (all attempts together), for the TIMEOUT message. */
  timeoutMs: number;
  baseURL: string;
  /** The caller's signal: when it fired, the failure is a cancellation whatever the SDK says. */
  signal?: AbortSignal;
  /** The per-call guard, whose own abort reason (stream stall) wins over the SDK's error. */
  guard?: CallGuard;
}

/**
 * Removes the call's API key, `sk-` keys and auth header values from text that may echo them (error
 * bodies, URLs), the secret policy of core/secrets.ts with the `***` marks of provider messages.
 */
export function redactSecrets(text: string, apiKey?: string): string {
  return redactText(text, apiKey ? [apiKey] : [], { mark: '***', authHeaders: true });
}

/**
 * The key sent to a node's own base_url when it names no key variable: local servers (Ollama, vLLM)
 * need none, the SDKs need a non-empty one. A 401 with it means the endpoint wants a real key.
 */
export const PLACEHOLDER_KEY = 'not-needed';

/** A base URL without user info or query, safe to print in a hint. */
export function displayURL(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid base URL)';
  }
}

/** Maps anything a provider call threw to a HatcheryError (PROVIDER, TIMEOUT or ABORTED). */
export function toProviderError(err: unknown, ctx: ErrorMappingContext): HatcheryError {
  // Cancellation first: once the caller aborted, the SDK's error (abort, connection reset) is a consequence.
  const cancelled = abortedError(ctx.signal);
  if (cancelled) return cancelled;
  const own = ctx.guard?.signal.reason;
  if (ctx.guard?.signal.aborted && own instanceof HatcheryError) return own;
  if (err instanceof HatcheryError) return err;
  const { classes, vendor } = ctx;
  const clean = (s: string) => redactSecrets(s, ctx.apiKey);
  if (err instanceof classes.APIConnectionTimeoutError) return timedOut(vendor, ctx.timeoutMs);
  if (err instanceof classes.APIUserAbortError || isAbortError(err)) {
    return new HatcheryError('ABORTED', `the ${vendor} call was cancelled`);
  }
  if (err instanceof classes.APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause;
    const detail = causeDetail(cause) ?? err.message;
    return new HatcheryError(
      'PROVIDER',
      clean(
        `could not reach the ${vendor} API at ${displayURL(ctx.baseURL)} (${detail}): check the base URL (base_url, or the ${vendor.toUpperCase()}_BASE_URL variable) and the network`,
      ),
      { baseURL: displayURL(ctx.baseURL) },
    );
  }
  if (err instanceof classes.APIError) {
    const status = (err as { status?: unknown }).status;
    const apiMessage = apiMessageOf(err);
    if (typeof status === 'number') {
      const hint =
        status === 401 || status === 403
          ? ctx.apiKey === PLACEHOLDER_KEY
            ? ` (no API key was sent to ${displayURL(ctx.baseURL)}: a vendor's key goes only to its own API or to the base URL its ${vendor.toUpperCase()}_BASE_URL variable names; if this endpoint needs a key, name the variable that holds it with "api_key_env" on the node)`
            : ' (check the API key)'
          : status === 404
            ? ` (check the model name and the base URL ${displayURL(ctx.baseURL)})`
            : '';
      // No `cause`: the SDK error holds the raw body, which may echo credentials.
      return new HatcheryError('PROVIDER', clean(`${vendor} API error ${status}: ${apiMessage}${hint}`), {
        status,
      });
    }
    // Errors sent inside a stream (`event: error`) have no HTTP status.
    return new HatcheryError('PROVIDER', clean(`${vendor} API error: ${apiMessage}`));
  }
  const message = err instanceof Error ? err.message : String(err);
  return new HatcheryError('PROVIDER', clean(`${vendor} call failed: ${message}`), {}, { cause: err });
}

/** The TIMEOUT of a call that ran out of time (also what an SDK's own attempt timeout maps to). */
export function timedOut(vendor: string, timeoutMs: number): HatcheryError {
  return new HatcheryError('TIMEOUT', `${vendor} call timed out after ${timeoutMs} ms`, { timeoutMs });
}

/** The server's own error text: `error.message` of the body when present, else the SDK message sans status. */
function apiMessageOf(err: Error): string {
  const e = err as { error?: unknown; message: string };
  const body = e.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const msg = body?.error?.message ?? body?.message;
  const text = typeof msg === 'string' && msg ? msg : e.message.replace(/^\d{3}\s+/, '');
  // Proxies answer with whole HTML pages; the start is enough to recognise them.
  return text.length > 500 ? `${text.slice(0, 500)}…` : text || 'no error message';
}

/** The innermost useful reason of a fetch failure, e.g. `ECONNREFUSED`. */
function causeDetail(cause: unknown): string | undefined {
  let c: unknown = cause;
  let best: string | undefined;
  for (let depth = 0; c && typeof c === 'object' && depth < 5; depth++) {
    const e = c as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === 'string') best = e.code;
    else if (typeof e.message === 'string' && e.message && !best) best = e.message;
    c = e.cause;
  }
  return best;
}

/**
 * One provider call's abort scope: a per-call signal linked to the caller's, so that
 * - the caller's abort rejects at once, even during the wait before a retry;
 * - the listener on the long-lived run signal is removed after the call (SDKs add one per attempt and
 *   never remove it, which leaks and triggers MaxListenersExceeded warnings);
 * - the call's deadline (every attempt and retry wait together) and a stalled stream abort it with a
 *   TIMEOUT reason.
 */
export class CallGuard {
  private readonly controller = new AbortController();
  private readonly unwatch: (() => void) | undefined;
  private rejectAbort: ((err: unknown) => void) | undefined;
  private idle: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineAt = Number.POSITIVE_INFINITY;

  constructor(private readonly outer: AbortSignal | undefined) {
    // Through watchAbort: the calls of a run (or of a fan-out's branches) share one listener on its
    // signal instead of adding and removing one each, which is quadratic in the calls in flight.
    // An already aborted signal never fires again: race() and check() see it instead.
    this.unwatch =
      outer && !outer.aborted
        ? watchAbort(outer, () => {
            this.controller.abort(outer.reason);
            this.rejectAbort?.(outer.reason);
          })
        : undefined;
  }

  /** The signal to hand the SDK. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Settles like `promise`, or rejects as soon as the caller aborts; a late rejection is swallowed. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.outer?.aborted || this.controller.signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(this.controller.signal.reason ?? this.outer?.reason);
    }
    // `then` below handles the promise's rejection too (passing it on is a no-op once settled), so no
    // separate `catch` is needed on this path: one promise and one closure less per attempt.
    return new Promise<T>((resolve, reject) => {
      this.rejectAbort = reject;
      promise.then(resolve, reject);
    });
  }

  /** Aborts the call with the TIMEOUT of `vendor` once `ms` have passed, whatever it is doing (attempt or retry wait). */
  startDeadline(ms: number, vendor: string): void {
    this.deadlineAt = performance.now() + ms;
    this.deadlineTimer = setTimeout(() => this.abortWith(timedOut(vendor, ms)), ms);
  }

  /** Aborts the call with `reason` (the deadline, a stalled stream) unless it was aborted already. */
  abortWith(reason: HatcheryError): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    this.rejectAbort?.(reason);
  }

  /** Ends the deadline: a streamed reply is then bounded by its idle timeout instead. */
  endDeadline(): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.deadlineAt = Number.POSITIVE_INFINITY;
  }

  /** Milliseconds left before the deadline (Infinity without one). */
  remaining(): number {
    return this.deadlineAt - performance.now();
  }

  /** Waits `ms`, or rejects with the abort reason as soon as the call is aborted (cancel or deadline). */
  sleep(ms: number): Promise<void> {
    return sleep(ms, this.controller.signal).then(() => this.check());
  }

  /** Aborts the call with `reason` unless data arrives every `ms` (call `touch` on each chunk). */
  watchIdle(ms: number, reason: () => HatcheryError): void {
    this.idle = setTimeout(() => this.abortWith(reason()), ms);
    this.idle.unref?.();
  }

  /** Resets the idle timer after data arrived. */
  touch(): void {
    this.idle?.refresh();
  }

  /** Throws when the call was aborted (streams end quietly on abort, so callers check after reading). */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /**
   * Detaches from the caller's signal and, unless the call `finished` with its whole reply read, stops
   * anything the SDK still has in flight (a pending retry, a request or stream left behind by an error).
   */
  dispose(finished = false): void {
    if (this.idle) clearTimeout(this.idle);
    this.endDeadline();
    this.unwatch?.();
    this.rejectAbort = undefined;
    if (!finished && !this.controller.signal.aborted) this.controller.abort();
  }
}
