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

/** True when `a` and `b` are the same process (same host, pid and start time). */
export function sameOwner(a: RunOwner, b: RunOwner): boolean {
  return a.pid === b.pid && a.host === b.host && a.since === b.since;
}
