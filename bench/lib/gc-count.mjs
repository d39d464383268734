// Preloaded (--import) into the servers of bench/concurrent-calls.ts: counts the process's garbage
// collections and the bytes it allocated (the heap in use now plus what every collection freed), and
// on SIGUSR2 writes them to HATCHERY_BENCH_GC_DIR/<pid>.json. Per call, both follow what a call
// allocates whatever else the machine runs (unlike CPU and wall time), so they show changes that
// the machine's load hides.
import { writeFileSync } from 'node:fs';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.HATCHERY_BENCH_GC_DIR;
if (dir && isMainThread) {
  const counts = { seq: 0, minor: 0, major: 0, allocated: 0 };
  let freed = 0;
  let profiler = new GCProfiler();
  profiler.start();
  process.on('SIGUSR2', () => {
    for (const s of profiler.stop()?.statistics ?? []) {
      if (s.gcType === 'Scavenge' || s.gcType === 'MinorMarkSweep') counts.minor++;
      else counts.major++;
      freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
    }
    profiler = new GCProfiler();
    profiler.start();
    counts.seq++;
    counts.allocated = getHeapStatistics().used_heap_size + freed;
    writeFileSync(`${dir}/${process.pid}.json`, JSON.stringify(counts));
  });
}
