import type { RunEvent, RunListener } from '../engine/contracts.js';

/** Default interval of heartbeat progress during a long node, in milliseconds (well under 10 s). */
export const DEFAULT_HEARTBEAT_MS = 5_000;

/** Parameters of one `notifications/progress`. */
export interface ProgressParams {
  progressToken: string | number;
  progress: number;
  message: string;
}

/** Sends one progress notification; failures (a closed connection) are ignored by the caller. */
export type ProgressSender = (params: ProgressParams) => Promise<void>;

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Turns run events into `notifications/progress` for one call: a notification at every node start
 * and finish (nested runs too) and a heartbeat while a node runs longer than the interval, so that
 * clients resetting their timeout on progress keep waiting. Progress values strictly increase.
 */
export class ProgressReporter {
  private seq = 0;
  private lastSent = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Nodes running now, innermost last (nested runs stack on their caller). */
  private readonly current: { label: string; since: number }[] = [];
  /** The run listener to pass as `onEvent`. */
  readonly listener: RunListener;

  constructor(
    private readonly token: string | number,
    private readonly send: ProgressSender,
    private readonly heartbeatMs = DEFAULT_HEARTBEAT_MS,
  ) {
    this.listener = (e) => this.onEvent(e);
  }

  /** Starts the heartbeat; call `stop` when the run ends. */
  start(message = 'started'): void {
    this.notify(message);
    this.timer = setInterval(() => this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  /** Stops the heartbeat. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private onEvent(e: RunEvent): void {
    const label = (name: string) => (e.depth > 0 ? `${e.hatchery} > ${name}` : name);
    if (e.type === 'node_start') {
      const l = label(e.node);
      this.current.push({ label: l, since: performance.now() });
      this.notify(`step ${e.step}: ${l} started`);
    } else if (e.type === 'node_end') {
      const l = label(e.node);
      const i = this.current.findLastIndex((c) => c.label === l);
      if (i >= 0) this.current.splice(i, 1);
      this.notify(`step ${e.step}: ${l} done (${seconds(e.ms)})`);
    }
  }

  private beat(): void {
    // Only when quiet: node events already count as signs of life.
    if (performance.now() - this.lastSent < this.heartbeatMs * 0.9) return;
    const c = this.current[this.current.length - 1];
    this.notify(c ? `${c.label} still running (${seconds(performance.now() - c.since)})` : 'still running');
  }

  private notify(message: string): void {
    this.lastSent = performance.now();
    this.send({ progressToken: this.token, progress: ++this.seq, message }).catch(() => {
      // The client went away; the run's signal handles that.
    });
  }
}
