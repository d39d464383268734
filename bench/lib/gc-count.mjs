// Preloaded (--import) into the servers of bench/concurrent-calls.ts: counts the process's garbage
// collections by kind, and on SIGUSR2 writes the counts so far to HATCHERY_BENCH_GC_DIR/<pid>.json.
// The number of young-generation collections per call follows what a call allocates, whatever else
// the machine runs (unlike CPU and wall time), so it shows allocation changes that load hides.
import { writeFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.HATCHERY_BENCH_GC_DIR;
if (dir && isMainThread) {
  const counts = { seq: 0, minor: 0, major: 0, ms: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.major++;
      counts.ms += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    counts.seq++;
    writeFileSync(`${dir}/${process.pid}.json`, JSON.stringify(counts));
  });
}
