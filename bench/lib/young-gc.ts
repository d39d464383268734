// What young collections keep: the objects a workload leaves alive into the next scavenge are copied
// there (and the second time into the old generation, which only a full collection frees). A finished
// run should leave nothing to them; the figure shows when something keeps runs alive past their end.
import { GCProfiler } from 'node:v8';

/** Young collections during a stretch of work: how many, and the median KiB kept and ms taken by one. */
export interface YoungCollections {
  count: number;
  keptKiB: number;
  ms: number;
}

type Spaces = { spaceName: string; spaceUsedSize: number }[];
const used = (spaces: Spaces, name: string) => spaces.find((s) => s.spaceName === name)?.spaceUsedSize ?? 0;

/** Starts watching collections; the returned function stops and sums up the young ones. */
export function watchYoungCollections(): () => YoungCollections {
  const profiler = new GCProfiler();
  profiler.start();
  return () => {
    const kept: number[] = [];
    const ms: number[] = [];
    for (const s of profiler.stop()?.statistics ?? []) {
      if (s.gcType !== 'Scavenge' && s.gcType !== 'MinorMarkSweep') continue;
      const before = s.beforeGC.heapSpaceStatistics as Spaces;
      const after = s.afterGC.heapSpaceStatistics as Spaces;
      // Survivors stay in the new space (or its large-object space); the rest moves to the old one.
      const promoted = Math.max(0, used(after, 'old_space') - used(before, 'old_space'));
      kept.push(used(after, 'new_space') + used(after, 'new_large_object_space') + promoted);
      ms.push(s.cost / 1000);
    }
    const mid = (a: number[]) => (a.length ? [...a].sort((x, y) => x - y)[a.length >> 1]! : 0);
    return { count: kept.length, keptKiB: mid(kept) / 1024, ms: mid(ms) };
  };
}
