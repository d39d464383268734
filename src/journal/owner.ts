import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { RunOwner } from './store.js';

/** This process as the owner of the runs it starts or resumes. */
export const processOwner: RunOwner = {
  pid: process.pid,
  host: hostname(),
  // When this process started: a later process that reuses the pid is another owner.
  since: Math.round(performance.timeOrigin),
};

/** True when the process `owner` names still runs on this host (signal 0 probes without signalling). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `owner` still runs its run: this process when it owns the run here (`ownedHere`), a live
 * pid on this host, or, for another host, a run `file` changed within `staleMs` (its owner touches it).
 */
export async function ownerAlive(
  owner: RunOwner | undefined,
  ownedHere: boolean,
  file: string,
  staleMs: number,
): Promise<boolean> {
  // A run_start without a readable owner (a damaged or planted file) has nobody running it.
  if (owner === null || typeof owner !== 'object' || typeof owner.pid !== 'number') return false;
  const me = processOwner;
  // This process (the same host, pid and start time) runs it only when it owns it here.
  if (owner.pid === me.pid && owner.host === me.host && owner.since === me.since) return ownedHere;
  if (owner.host !== hostname()) {
    try {
      return Date.now() - (await stat(file)).mtimeMs < staleMs;
    } catch {
      return false;
    }
  }
  // Same pid but another start time: the pid was reused, the owner is gone.
  if (owner.pid === process.pid) return false;
  return pidAlive(owner.pid);
}
