/**
 * Tool-call timeouts through one Node timer per timeout value instead of one per call. Calls with
 * the same timeout end in the order they started, so each value keeps a queue in deadline order
 * and one timer armed for its first live entry. Starting a call is an object and an array push;
 * ending it marks its entry. Node's setTimeout/clearTimeout per call cost a Timeout object, a
 * closure and list work on every call of a wide fan-out of fast tools, whose calls almost never
 * time out.
 */

/** What runs when a deadline passes: a function, or an object's `expire` (no closure per call). */
export type OnDeadline = (() => void) | { expire(): void };

/** A pending deadline: `cancelDeadline` it when the call is over. */
export interface Deadline {
  readonly at: number;
  fn: OnDeadline | undefined;
  readonly lane: Lane;
}

const lanes = new Map<number, Lane>();

/** The longest delay setTimeout honours (2^31 - 1 ms). */
const MAX_DELAY = 2 ** 31 - 1;

class Lane {
  private queue: Deadline[] = [];
  private head = 0;
  private live = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  add(fn: OnDeadline, from: number): Deadline {
    const d: Deadline = { at: from + this.ms, fn, lane: this };
    this.queue.push(d);
    this.live++;
    if (this.timer === undefined) this.arm(this.ms);
    return d;
  }

  cancel(d: Deadline): void {
    if (d.fn === undefined) return;
    d.fn = undefined;
    // A lane left with no live call stays until its timer fires (unref'd, it holds nothing alive):
    // calls that end one by one as the next starts (a fan-out of fast tools) would otherwise close
    // and reopen it, a Node timer each, on every call.
    this.live--;
    if (this.queue.length - this.head > 2 * this.live + 64) {
      // Ended calls leave marked entries behind until their deadline; drop them so a long timeout
      // with many short calls does not hold one entry per call for its whole length.
      this.queue = this.queue.slice(this.head).filter((e) => e.fn !== undefined);
      this.head = 0;
    }
  }

  private arm(delay: number): void {
    // Node fires longer delays at once; a longer timeout is re-armed until it is due.
    this.timer = setTimeout(this.fire, Math.min(delay, MAX_DELAY));
    // A pending tool call keeps the process alive by itself; its timeout must not.
    this.timer.unref();
  }

  private close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    this.head = 0;
    if (lanes.get(this.ms) === this) lanes.delete(this.ms);
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    const due: OnDeadline[] = [];
    while (this.head < this.queue.length) {
      const d = this.queue[this.head] as Deadline;
      if (d.fn !== undefined) {
        // Node may fire a little early by its own clock: such an entry waits for a new arming.
        if (d.at > now) break;
        due.push(d.fn);
        d.fn = undefined;
        this.live--;
      }
      this.head++;
    }
    // The lane is settled before any callback runs, since callbacks end (cancel) other calls.
    if (this.live === 0) this.close();
    else {
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      const next = this.queue[this.head] as Deadline;
      this.arm(Math.max(1, Math.ceil(next.at - now)));
    }
    for (const fn of due) {
      if (typeof fn === 'function') fn();
      else fn.expire();
    }
  };
}

/**
 * Calls `fn` (or its `expire`) once `ms` have passed since `from` (a `performance.now()`, by default
 * now), unless `cancelDeadline` is called first. A `from` a little in the past (a call that started
 * before its deadline was armed) may let an entry wait behind a later one of its lane by that much.
 */
export function startDeadline(ms: number, fn: OnDeadline, from = performance.now()): Deadline {
  let lane = lanes.get(ms);
  if (lane === undefined) {
    lane = new Lane(ms);
    lanes.set(ms, lane);
  }
  return lane.add(fn, from);
}

/** Ends a deadline (a no-op when it fired or was cancelled already). */
export function cancelDeadline(d: Deadline): void {
  d.lane.cancel(d);
}
