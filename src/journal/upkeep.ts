/**
 * When a state folder is pruned, and what a prune leaves alone: a prune when the folder is first
 * opened, every ten minutes after a run ends, and sooner once the folder holds many more files than
 * the runs it keeps (a busy server makes a file per call, and every listing of it grows with them).
 */

import { type PruneScope, pruneRuns } from './prune.js';

/**
 * Files beyond the runs kept, and runs created since the last prune, before a prune comes early: a
 * prune stats every file it keeps, so large batches cost less per deleted run (and a burst of calls
 * rarely meets one).
 */
export const PRUNE_EVERY = 5000;
/** A prune after a run ends at most this often, unless the folder is full (see PRUNE_EVERY). */
const PRUNE_INTERVAL_MS = 600_000;

/** What the schedule needs of its store: what a prune does, and when. */
export interface PrunedFolder extends Omit<PruneScope, 'starting'> {
  /** See PRUNE_EVERY. */
  pruneEvery: number;
  /** Resolves once the last records of runs that ended are written. */
  idle(): Promise<void>;
}

/** The prunes of one store, and its estimate of how many entries its folder holds. */
export class PruneSchedule {
  /**
   * About how many entries the folder holds: its last listing's count, plus the runs created since,
   * minus what prunes removed; undefined before the first listing.
   */
  entries: number | undefined;
  /** The ids of runs started while each prune under way goes on (see prune). */
  private readonly starting = new Set<Set<string>>();
  private lastPrune = 0;
  /** Runs created since the last prune started: a prune for a full folder waits for this many. */
  private createdSincePrune = 0;

  constructor(private readonly folder: PrunedFolder) {}

  /** A run was created in the folder. */
  created(id: string): void {
    if (this.entries !== undefined) this.entries++;
    this.createdSincePrune++;
    for (const set of this.starting) set.add(id);
  }

  /** A run ended: prunes in the background when one is due. */
  ended(): void {
    const { maxRuns, pruneEvery } = this.folder;
    if (
      Date.now() - this.lastPrune > PRUNE_INTERVAL_MS ||
      (this.entries !== undefined &&
        this.entries > maxRuns + pruneEvery &&
        this.createdSincePrune >= pruneEvery)
    )
      this.background();
  }

  /** Prunes without waiting; `except` runs are starting, left out. */
  background(except: Iterable<string> = []): void {
    this.prune(except).catch(() => {
      // Pruning is upkeep: a folder that cannot be read now is tried again later.
    });
  }

  /** Drops finished runs beyond the count and age limits; `except` runs are starting, left out. */
  async prune(except: Iterable<string> = []): Promise<number> {
    this.lastPrune = Date.now();
    // Now, not after the wait below: a run that ends meanwhile must not start another prune.
    this.createdSincePrune = 0;
    // Runs started while the prune goes on are neither counted nor pruned: "keep N" means N finished
    // runs besides the ones starting now (their first write can come before the listing).
    const starting = new Set<string>(except);
    this.starting.add(starting);
    try {
      // The last records of runs that ended are on disk first: else a run that ended a moment ago
      // looks running, and stays until the next prune.
      await this.folder.idle();
      const { deleted, listed, removed } = await pruneRuns({ ...this.folder, starting });
      // The listing's count when there was no estimate yet; else the estimate (which counts the runs
      // created meanwhile) less what was removed.
      this.entries = Math.max(0, (this.entries ?? listed) - removed);
      return deleted;
    } finally {
      this.starting.delete(starting);
    }
  }
}
