/**
 * The journal's clock: a record's `at` (ms since the epoch) from a performance.now() reading, so a
 * journaled node costs no clock read of the journal's own. node_start, node_end and model_call carry
 * the reading their emitter took anyway (`ts`); other records read performance.now() once when they
 * are queued. Date.now() per event was a quarter to a half of a µs a node on this project's VMs.
 *
 * Correct to the millisecond: performance.timeOrigin is the wall clock when the process started, in
 * µs, and performance.now() counts from it on the monotonic clock, which the kernel slews with the
 * wall clock; the two differ by a few µs (an `at` is then a millisecond after Date.now()'s in a few
 * records of a thousand, both within a millisecond of when it happened). Only a wall clock set since
 * (by hand, an NTP step, a VM resumed) moves them apart: every flush compares with Date.now() and, when
 * they differ by more than a millisecond, takes the new wall clock from then on. All the records of a
 * journal come from this one clock, so their order and their `at` agree, as with Date.now().
 */

/** performance.now() + this = ms since the epoch. */
let offset = performance.timeOrigin;

/** The wall-clock time (ms since the epoch, whole) of a performance.now() reading. */
export function epochMs(ts: number): number {
  return Math.floor(offset + ts);
}

/**
 * Compares the clock with Date.now() (a flush calls it before it writes): a wall clock set since the
 * offset was taken moves it. Date.now() cuts to whole milliseconds, so the new offset aims at the middle.
 */
export function checkClock(): void {
  const now = Date.now();
  const p = performance.now();
  const at = Math.floor(offset + p);
  if (at < now - 1 || at > now + 1) offset = now + 0.5 - p;
}
