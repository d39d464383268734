/**
 * Pruning a state folder: finished runs beyond the count and age limits are deleted. A busy server's
 * folder holds thousands of files between prunes, so the work is sized to what it deletes: one stat
 * per file, the last line of each file beyond the limits (the whole file only when that line does not
 * settle its status). Every stat and unlink goes through libuv's pool, so a prune never holds up the
 * calls being served.
 */
import { readdir, stat, unlink as unlinkFile } from 'node:fs/promises';
import { CANCEL_SUFFIX } from './cancel-watch.js';
import { runIdOfFile } from './run-files.js';
import { finishedByLastLine } from './run-tail.js';
import type { RunStatus } from './store.js';

/** What a prune needs of its store. */
export interface PruneScope {
  /** The folder. */
  location: string;
  /** The folder with its separator, which file names follow. */
  prefix: string;
  /** Finished runs kept, newest first. */
  maxRuns: number;
  /** Finished runs older than this (ms since their last write) are deleted whatever their count. */
  maxAgeMs: number;
  /** Runs starting while the prune goes on: neither counted nor deleted. */
  starting: ReadonlySet<string>;
  /** True for a run this process is running: counted, never deleted. */
  live(id: string): boolean;
  /** A run's status read from its whole file (its last line did not settle it); undefined: no run. */
  status(id: string): Promise<RunStatus | undefined>;
}

/** What a prune did: the folder's entries when listed, and the files it removed (runs and markers). */
export interface PruneResult {
  deleted: number;
  listed: number;
  removed: number;
}

/** Deletes finished runs beyond the limits, and cancel markers whose run is gone. */
export async function pruneRuns(scope: PruneScope): Promise<PruneResult> {
  let names: string[];
  try {
    names = await readdir(scope.location);
  } catch {
    return { deleted: 0, listed: 0, removed: 0 };
  }
  const ids: string[] = [];
  const marked = new Set<string>();
  for (const name of names) {
    const id = runIdOfFile(name);
    if (id !== undefined) ids.push(id);
    else if (name.endsWith(CANCEL_SUFFIX)) marked.add(name.slice(0, -CANCEL_SUFFIX.length));
  }
  const known: { id: string; mtime: number }[] = [];
  for (const id of ids) {
    if (scope.starting.has(id)) continue;
    try {
      known.push({ id, mtime: (await stat(`${scope.prefix}${id}.jsonl`)).mtimeMs });
    } catch {
      // Gone or unreadable now: left for a later prune.
    }
  }
  known.sort((a, b) => b.mtime - a.mtime);
  // File times are as coarse as the kernel's clock tick (4 ms here): runs that ended in the same tick
  // as the last one kept are kept too, rather than one of them picked at random.
  const lastKept = scope.maxRuns > 0 ? known[scope.maxRuns - 1]?.mtime : undefined;
  const now = Date.now();
  let deleted = 0;
  let removed = 0;
  for (let i = 0; i < known.length; i++) {
    const { id, mtime } = known[i]!;
    if ((i < scope.maxRuns || mtime === lastKept) && now - mtime <= scope.maxAgeMs) continue;
    if (scope.live(id)) continue;
    const file = `${scope.prefix}${id}.jsonl`;
    if (!finishedByLastLine(file)) {
      const status = await scope.status(id);
      // Running runs (and suspended ones, waiting for an answer) are never pruned.
      if (status === 'running' || status === 'input_required') continue;
    }
    if (await unlink(file)) removed++;
    deleted++;
    if (marked.delete(id) && (await unlink(`${scope.prefix}${id}${CANCEL_SUFFIX}`))) removed++;
  }
  // Markers left of runs that are gone (pruned by another process meanwhile) would stay forever.
  const listedIds = new Set(ids);
  for (const id of marked) {
    if (!listedIds.has(id) && (await unlink(`${scope.prefix}${id}${CANCEL_SUFFIX}`))) removed++;
  }
  return { deleted, listed: names.length, removed };
}

/** Removes a file; false when it was gone already. Other errors (a read-only folder) end the prune. */
async function unlink(file: string): Promise<boolean> {
  try {
    await unlinkFile(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
