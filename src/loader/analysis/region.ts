/**
 * The nodes a slice of variables needs the dataflow over: those a setter of one of its variables
 * reaches (elsewhere their bits are zero) that also reach a template reading one (elsewhere nobody
 * reads them). In a chain each variable lives a few nodes, so the slices of a huge file cost about
 * its node count in all, instead of nodes x variables.
 */
import type { Region } from './dataflow.js';
import { setters } from './dataflow.js';
import type { Flow } from './flow.js';

/** What the regions of one file are searched with, built once per analysis. */
export interface RegionWiring {
  /** For each node, the nodes whose state it is computed from (dependents reversed). */
  readonly sources: readonly (readonly number[])[];
  /** The parallels that set out.<branch> for each branch name. */
  readonly branchParents: ReadonlyMap<string, readonly number[]>;
  /** Scratch stamps: the nodes seen by the current search. */
  readonly back: Uint32Array;
  readonly fwd: Uint32Array;
  stamp: number;
  /** The slots of the current region (reset for the next: one region is in use at a time). */
  readonly slot: Int32Array;
  last: readonly number[];
}

/** Reverses the dataflow's dependents and lists the parallels of each branch. */
export function regionWiring(flow: Flow): RegionWiring {
  const n = flow.nodes.length;
  const sources: number[][] = [];
  for (let i = 0; i < n; i++) sources.push([]);
  const { dependents } = flow.wiring();
  dependents.forEach((ds, i) => {
    for (const d of ds) sources[d]!.push(i);
  });
  const branchParents = new Map<string, number[]>();
  flow.starts.forEach((starts, p) => {
    for (const s of starts) {
      if (s.how !== 'branch') continue;
      const name = flow.nodes[s.target]!.name;
      const list = branchParents.get(name);
      if (list) list.push(p);
      else branchParents.set(name, [p]);
    }
  });
  return {
    sources,
    branchParents,
    back: new Uint32Array(n),
    fwd: new Uint32Array(n),
    stamp: 0,
    slot: new Int32Array(n),
    last: [],
  };
}

/**
 * The region of the variables `names` (`ctx:x`, `out:y`) read at the nodes `readers`, with the
 * reached flags of a full run. It shares its slots with the wiring: valid until the next call.
 */
export function regionOf(
  flow: Flow,
  full: { inReached: Uint8Array; outReached: Uint8Array },
  w: RegionWiring,
  names: readonly string[],
  readers: readonly number[],
): Region {
  const stamp = ++w.stamp;
  const { back, fwd } = w;
  // Every node whose state the readers' states are computed from (transitively).
  const queue: number[] = [];
  for (const r of readers) {
    if (back[r] === stamp) continue;
    back[r] = stamp;
    queue.push(r);
  }
  for (let q = 0; q < queue.length; q++) {
    for (const s of w.sources[queue[q]!]!) {
      if (back[s] === stamp) continue;
      back[s] = stamp;
      queue.push(s);
    }
  }
  // Of those, the ones a setter reaches: a node a setter reaches but no reader needs is left out,
  // and so is everything after it (it reaches no reader either).
  const byKey = setters(flow);
  const nodes: number[] = [];
  const enter = (i: number) => {
    if (back[i] !== stamp || fwd[i] === stamp) return;
    fwd[i] = stamp;
    nodes.push(i);
  };
  for (const key of names) {
    for (const i of byKey.get(key) ?? []) enter(i);
    if (key.startsWith('out:')) for (const p of w.branchParents.get(key.slice(4)) ?? []) enter(p);
  }
  const { dependents } = flow.wiring();
  for (let q = 0; q < nodes.length; q++) for (const d of dependents[nodes[q]!]!) enter(d);
  nodes.sort((a, b) => a - b);
  const { slot } = w;
  for (const i of w.last) slot[i] = 0;
  nodes.forEach((i, k) => {
    slot[i] = k + 1;
  });
  w.last = nodes;
  return { slot, nodes, inReached: full.inReached, outReached: full.outReached };
}
