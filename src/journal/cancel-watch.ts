/**
 * How the process that owns running runs hears of cancels asked by another process: that process
 * writes a `<id>.cancel` marker beside the run's file, and the owner looks for the markers of its
 * runs every poll. The same poll keeps the owner's run files fresh (their mtime), so another host
 * can tell a live run from an abandoned one.
 */
import { readdir, rm, stat, utimes } from 'node:fs/promises';
import { CancelListeners } from './cancel-listeners.js';

/** The file another process writes to ask the owner to cancel a run: `<id>.cancel`. */
export const CANCEL_SUFFIX = '.cancel';
/** Up to this many runs in flight, a poll stats each one's cancel marker; beyond, it may list the folder once. */
const FEW_RUNS = 8;
/**
 * What a stat of one marker costs, in entries of a folder listing (measured on tmpfs: a stat about
 * 2.5 µs of CPU, a listed name 0.8 to 1.6 µs). Past FEW_RUNS, a poll lists the folder only when that
 * is cheaper than a stat per run in flight: a busy server's folder holds thousands of files between
 * prunes, and listing it every poll cost more per call the longer the server ran.
 */
const STAT_IN_ENTRIES = 3;

/** What the watch needs of its store. */
export interface WatchedFolder {
  /** The folder with its separator, which run file names follow. */
  prefix: string;
  /** The runs this process owns now. */
  live: ReadonlyMap<string, unknown>;
  /** How often to look, and how long another host waits before it takes a quiet run for abandoned (ms). */
  pollMs: number;
  staleMs: number;
  /** About how many entries the folder holds (undefined: unknown), set from each listing. */
  count: { entries: number | undefined };
}

/** Polls for cancel markers of the runs this process owns while it owns any. */
export class CancelWatch extends CancelListeners {
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  /** A listing of the folder is under way. */
  private listing = false;

  constructor(private readonly folder: WatchedFolder) {
    super();
  }

  /** Starts polling (a run is owned now); nothing when it polls already. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.folder.pollMs);
    this.timer.unref();
  }

  /** Stops polling (no run is owned any more, or the store closes). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A run's cancel marker: `id` is a checked UUID, so no path.join, which a poll calls per run. */
  markerOf(id: string): string {
    return `${this.folder.prefix}${id}${CANCEL_SUFFIX}`;
  }

  private tick(): void {
    const { live, pollMs, staleMs, prefix } = this.folder;
    this.ticks++;
    const heartbeat = this.ticks % Math.max(1, Math.round(staleMs / 4 / pollMs)) === 0;
    const entries = this.folder.count.entries;
    if (live.size <= FEW_RUNS || (entries !== undefined && live.size * STAT_IN_ENTRIES < entries)) {
      for (const id of live.keys()) {
        stat(this.markerOf(id)).then(
          () => this.cancelMarked(id),
          () => {
            // No marker: nobody asked.
          },
        );
      }
    } else if (!this.listing) {
      // Many runs in flight in a folder of few files: one listing instead of a stat per run.
      this.listing = true;
      readdir(prefix)
        .then((names) => {
          this.folder.count.entries = names.length;
          for (const name of names) {
            if (!name.endsWith(CANCEL_SUFFIX)) continue;
            const id = name.slice(0, -CANCEL_SUFFIX.length);
            if (live.has(id)) this.cancelMarked(id);
          }
        })
        .catch(() => {
          // A folder that cannot be listed now is listed again at the next poll.
        })
        .finally(() => {
          this.listing = false;
        });
    }
    if (heartbeat) {
      const now = new Date();
      for (const id of live.keys()) void utimes(`${prefix}${id}.jsonl`, now, now).catch(() => {});
    }
  }

  /** A marker found for a run this process owns: remove it and cancel the run (once, if still owned). */
  private cancelMarked(id: string): void {
    if (!this.folder.live.has(id)) return;
    void rm(this.markerOf(id), { force: true });
    this.fire(id);
  }
}
