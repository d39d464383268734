import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { median } from './stats.js';

/** What creating one run file costs on a file system, in µs: wall time and the kernel's CPU time. */
export interface FileCost {
  wallUs: number;
  systemUs: number;
}

/**
 * Creates, writes (a run's few hundred bytes) and closes `count` files in a fresh folder under `dir`,
 * as the journal does once per run, in batches of 50, and gives the medians per file. The journal's
 * share of a call depends on it: on ext4 without a journal, after many files were deleted (test suites
 * running beside), creating a file can cost 0.5-1 ms of kernel CPU (find_inode_bit skips each
 * recently deleted inode), against 20-40 µs usually.
 */
export function runFileCost(dir: string, count: number, inPlace = false): FileCost {
  // In place: the files go into `dir` itself (a server's state folder: creating a file costs what it
  // costs in that folder, which a fresh folder beside it need not show), and are removed after.
  const folder = inPlace ? dir : path.join(dir, `file-cost-${process.pid}`);
  const prefix = inPlace ? `file-cost-${process.pid}-` : '';
  mkdirSync(folder, { recursive: true });
  const line = `${JSON.stringify({ v: 1, type: 'run_start', pad: 'x'.repeat(600) })}\n`;
  const wall: number[] = [];
  const system: number[] = [];
  try {
    for (let done = 0; done < count; ) {
      const n = Math.min(50, count - done);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        const fd = openSync(path.join(folder, `${prefix}${done + i}.jsonl`), 'a', 0o600);
        writeSync(fd, line);
        closeSync(fd);
      }
      wall.push(((performance.now() - t0) * 1000) / n);
      system.push(process.cpuUsage(c0).system / n);
      done += n;
    }
  } finally {
    if (!inPlace) rmSync(folder, { recursive: true, force: true });
    else for (let i = 0; i < count; i++) rmSync(path.join(folder, `${prefix}${i}.jsonl`), { force: true });
  }
  return { wallUs: median(wall), systemUs: median(system) };
}

/** The line benchmarks print about it. */
export function describeFileCost(c: FileCost, where: string): string {
  return `creating a run file in ${where}: ${c.wallUs.toFixed(0)} µs (${c.systemUs.toFixed(0)} µs of kernel CPU); the journal creates one per run (put the state elsewhere with TMPDIR=DIR)`;
}
