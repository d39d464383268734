/**
 * The nodes a slice of variables needs the dataflow over: those a setter of one of its variables
 * reaches (elsewhere their bits are zero) that also reach a template reading one (elsewhere nobody
 * reads them). In a chain each variable lives a few nodes, so the slices of a huge file cost about
 * its node count in all, instead of nodes x variables.
 */
import type { Flow } from './flow.js';

/**
 * A part of the nodes to run the dataflow over, for variables whose bits are zero everywhere else or
 * read nowhere else: the nodes outside it keep a zero state and the reached flags of a full run.
 */
export interface Region {
  /** Per node: 1 + its position in `nodes` for the nodes to compute, 0 for the others. */
  readonly slot: Int32Array;
  /** The nodes to compute, in file order (the worklist's seeds). */
  readonly nodes: readonly number[];
  /** Reached flags of a full run over every node (they do not depend on the variables). */
  readonly inReached: Uint8Array;
  readonly outReached: Uint8Array;
}

/** Per file: the nodes that set each variable (`out:<name>`, `ctx:<save_output>`), built once. */
const settersOf = new WeakMap<Flow, Map<string, number[]>>();

/** The nodes that set each variable of `flow`: its out.<name>, and the ctx name it saves. */
export function setters(flow: Flow): Map<string, number[]> {
  let map = settersOf.get(flow);
  if (map) return map;
  map = new Map();
  const add = (key: string, i: number) => {
    const list = map!.get(key);
    if (list) list.push(i);
    else map!.set(key, [i]);
  };
  flow.nodes.forEach((node, i) => {
    add(`out:${node.name}`, i);
    const save = node.def.save_output;
    if (typeof save === 'string') add(`ctx:${save}`, i);
  });
  settersOf.set(flow, map);
  return map;
}

/** What the regions of one file are searched with, built once per analysis. */
export interface RegionWiring {
  /** For each node, the nodes whose state it is computed from (dependents reversed). */
  readonly sources: readonly (readonly number[])[];
  /** Per node: the topological position of its strongly connected component along dependents. */
  readonly order: Int32Array;
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
    order: componentOrder(dependents),
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
  const { back, fwd, order } = w;
  // A node between a setter and a reader sits between them in the topological order of the
  // components: the searches stay in that window (a chain's slice looks at its own few nodes).
  let hi = -1;
  for (const r of readers) hi = Math.max(hi, order[r]!);
  // The nodes a setter reaches (up to the last reader's position) ...
  const byKey = setters(flow);
  const reach: number[] = [];
  const enter = (i: number) => {
    if (fwd[i] === stamp || order[i]! > hi) return;
    fwd[i] = stamp;
    reach.push(i);
  };
  for (const key of names) {
    for (const i of byKey.get(key) ?? []) enter(i);
    if (key.startsWith('out:')) for (const p of w.branchParents.get(key.slice(4)) ?? []) enter(p);
  }
  const { dependents } = flow.wiring();
  for (let q = 0; q < reach.length; q++) for (const d of dependents[reach[q]!]!) enter(d);
  // ... that a reader's state is computed from: every node on such a path is reached too.
  const nodes: number[] = [];
  for (const r of readers) {
    if (fwd[r] !== stamp || back[r] === stamp) continue;
    back[r] = stamp;
    nodes.push(r);
  }
  for (let q = 0; q < nodes.length; q++) {
    for (const s of w.sources[nodes[q]!]!) {
      if (fwd[s] !== stamp || back[s] === stamp) continue;
      back[s] = stamp;
      nodes.push(s);
    }
  }
  nodes.sort((a, b) => a - b);
  const { slot } = w;
  for (const i of w.last) slot[i] = 0;
  nodes.forEach((i, k) => {
    slot[i] = k + 1;
  });
  w.last = nodes;
  return { slot, nodes, inReached: full.inReached, outReached: full.outReached };
}

/**
 * Per node, the position of its strongly connected component in a topological order of the
 * graph `edges` (iterative Tarjan: components come out sinks first).
 */
export function componentOrder(edges: readonly (readonly number[])[]): Int32Array {
  const n = edges.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const comp = new Int32Array(n);
  const stack: number[] = [];
  const work: number[] = [];
  const edge: number[] = [];
  let next = 0;
  let comps = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    work.push(root);
    edge.push(0);
    index[root] = low[root] = next++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const v = work[work.length - 1]!;
      const k = edge[edge.length - 1]!;
      const out = edges[v]!;
      if (k < out.length) {
        edge[edge.length - 1] = k + 1;
        const u = out[k]!;
        if (index[u] === -1) {
          index[u] = low[u] = next++;
          stack.push(u);
          onStack[u] = 1;
          work.push(u);
          edge.push(0);
        } else if (onStack[u]) low[v] = Math.min(low[v]!, index[u]!);
        continue;
      }
      work.pop();
      edge.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!;
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        let u: number;
        do {
          u = stack.pop()!;
          onStack[u] = 0;
          comp[u] = comps;
        } while (u !== v);
        comps++;
      }
    }
  }
  // Tarjan numbers sinks first: reversed, every edge goes to an equal or later position.
  for (let i = 0; i < n; i++) comp[i] = comps - 1 - comp[i]!;
  return comp;
}
