/**
 * Child processes as process trees. Every child starts in its own process group (POSIX), so one
 * signal reaches it and everything it started: `sh -c "sleep 30"` cannot leave its `sleep` behind.
 * When the direct child ends, or is stopped, the rest of its group is ended too; groups still alive
 * when this process exits are killed by an exit hook.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

/** Time between SIGTERM and SIGKILL when a process tree is stopped. */
export const KILL_GRACE_MS = 2_000;

const POSIX = process.platform !== 'win32';

/** Children whose process group may still have members. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * Sends a signal to a child's whole process group (on Windows to the child alone). False when
 * nothing was left to signal (or we may not signal it); signal 0 only tests.
 */
export function signalTree(child: ChildProcess, sig: NodeJS.Signals | 0): boolean {
  const pid = child.pid;
  if (pid === undefined) return false;
  if (!POSIX) {
    if (sig === 0) return child.exitCode === null && child.signalCode === null;
    return child.kill(sig);
  }
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    // ESRCH: the group is empty; EPERM: what is left is not ours to signal (a setuid program).
    return false;
  }
}

/**
 * Stops a child's process tree: SIGTERM (and SIGCONT, so stopped members see it) now, SIGKILL after
 * `graceMs` if any member is still there. Returns at once; the timer does not hold this process.
 */
export function endTree(child: ChildProcess, graceMs = KILL_GRACE_MS): void {
  if (!signalTree(child, 'SIGTERM')) {
    live.delete(child);
    return;
  }
  if (POSIX) signalTree(child, 'SIGCONT');
  const timer = setTimeout(() => {
    // The group may have emptied and its id gone to a newer child of ours: that one is not to be killed.
    for (const other of live) {
      if (other !== child && other.pid === child.pid) {
        live.delete(child);
        return;
      }
    }
    signalTree(child, 'SIGKILL');
    // After SIGKILL the group is gone unless the direct child lingers (reaped when it exits).
    if (child.exitCode !== null || child.signalCode !== null) live.delete(child);
  }, graceMs);
  timer.unref();
}

/** SIGKILLs every process tree still alive, synchronously (shutdown, a second Ctrl-C, exit). */
export function killAllTrees(): void {
  for (const child of live) signalTree(child, 'SIGKILL');
  live.clear();
}

/**
 * Spawns a program (never through a shell) in its own process group, registered so that shutdown
 * and the exit hook can kill it. When it exits, the rest of its group is ended (see endTree).
 */
export function spawnTree(file: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Detached groups do not die with us: kill what is left when this process exits.
    process.on('exit', killAllTrees);
  }
  const child = spawn(file, args, {
    ...options,
    shell: false,
    // Its own process group; Ctrl-C on a terminal then reaches only us, and we stop the group.
    detached: POSIX,
    windowsHide: true,
  });
  if (child.pid === undefined) return child;
  live.add(child);
  child.once('exit', () => {
    // Members of the group that outlive the program (background jobs, a pipe holder) end with it.
    if (signalTree(child, 0)) endTree(child);
    else live.delete(child);
  });
  return child;
}
