/**
 * How the process that runs a run hears of a cancel asked through another process: that process sets
 * the run's `cancel_requested`, and the owner looks for the flag on its running runs every poll while
 * it runs any.
 */
import type pg from 'pg';
import { CancelListeners } from '../cancel-listeners.js';
import { SCHEMA } from './schema.js';

/** Polls for cancels of the runs this process runs, and tells the listeners of each once. */
export class CancelPoll extends CancelListeners {
  /** Runs whose cancel was already passed on. */
  private readonly told = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: pg.Pool,
    /** The runs this process runs now. */
    private readonly live: ReadonlyMap<string, unknown>,
    private readonly pollMs: number,
  ) {
    super();
  }

  /** Polls while this process runs a run (call when one starts or ends). */
  update(): void {
    if (this.live.size > 0 && this.timer === undefined) {
      this.timer = setInterval(() => void this.poll(), this.pollMs);
      this.timer.unref();
    } else if (this.live.size === 0) {
      this.stop();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    for (const id of this.told) if (!this.live.has(id)) this.told.delete(id);
    const ids = [...this.live.keys()].filter((id) => !this.told.has(id));
    if (ids.length === 0) return;
    try {
      const res = await this.pool.query<{ id: string }>(
        `SELECT id FROM ${SCHEMA}.runs WHERE cancel_requested AND id = ANY($1::uuid[])`,
        [ids],
      );
      for (const { id } of res.rows) {
        if (!this.live.has(id) || this.told.has(id)) continue;
        this.told.add(id);
        this.fire(id);
      }
    } catch {
      // The database is unreachable for a moment: the next poll asks again.
    }
  }
}
