/**
 * How runs move through a file, as the walker and the fan-out kinds do it: the `next`/`on_limit`
 * edges of a chain, and the chains a node starts in a context of its own (parallel branches, a map's
 * node, a loop's body, `node:` tools). Built once per load in O(nodes + edges).
 */

import type { HatcheryGraph } from '../../engine/graph.js';
import { childrenOf } from '../../schema/kind.js';
import { kindSpec } from '../../schema/nodes.js';
import { toolRefFields } from '../../schema/tool-refs.js';

/** One validated node as the analysis reads it. */
export interface FlowNode {
  readonly name: string;
  readonly kind: string;
  readonly index: number;
  readonly def: Readonly<Record<string, unknown>>;
}

/** How a node starts another chain. */
export type StartHow = 'branch' | 'map' | 'body' | 'tool';

/** A chain a node starts: the node it starts from, how, and the JSON path that names it. */
export interface ChainStart {
  readonly target: number;
  readonly how: StartHow;
  readonly field: string;
  /** For a `node:` tool: every run of the node calls it (a baneling's), not only a model that may. */
  readonly always?: boolean;
}

/** One way into a node: from which node, and how (a chain edge, on_limit, or a chain it starts). */
export interface Entry {
  readonly from: number;
  readonly how: StartHow | 'next' | 'limit';
}

/** A `node:` tool reference: where it is written and the node it names (which may not exist). */
export interface NodeToolRef {
  readonly field: string;
  readonly ref: string;
  readonly node: string;
  readonly always: boolean;
}

const NONE: readonly number[] = [];

/** The `node:` references of a node: a baneling's tool_name, a drone's tools and its spawn templates' tools. */
function nodeToolRefs(n: FlowNode): NodeToolRef[] {
  const refs: NodeToolRef[] = [];
  for (const { ref, field, always } of toolRefFields(n.kind, n.def))
    if (ref.startsWith('node:') && ref.length > 5) refs.push({ field, ref, node: ref.slice(5), always });
  return refs;
}

/** The run structure of one file, by node position in the `nodes` list. */
export class Flow {
  readonly nodes: readonly FlowNode[];
  readonly index = new Map<string, number>();
  /** `next` targets (END aside) and `on_limit`: the edges the walker follows inside one chain. */
  readonly succ: (readonly number[])[] = [];
  /** The `on_limit` target of each node, or -1. */
  readonly onLimit: number[] = [];
  /** Chains each node starts in a context of its own. */
  readonly starts: (readonly ChainStart[])[] = [];
  /** `node:` references of each node, existing targets or not. */
  readonly toolRefs: (readonly NodeToolRef[])[] = [];
  /** 1 for a node whose on_limit is taken at its own limit too (a loop's last iteration). */
  readonly ownLimit: Uint8Array;
  /** 1 for a node that starts parallel branches (their saves are shared, see Dataflow). */
  readonly branching: Uint8Array;
  /** True when a walk may stop after the node (no next, or END among its entries). */
  readonly ends: boolean[] = [];
  readonly start: number;
  private readonly endMemo = new Map<number, readonly number[]>();
  private stamps: Uint32Array | undefined;
  private stamp = 0;

  /** `graph` is the file's routing (engine/graph.ts), built from the same nodes. */
  constructor(nodes: readonly FlowNode[], start: string | undefined, graph: HatcheryGraph) {
    this.nodes = nodes;
    this.ownLimit = new Uint8Array(nodes.length);
    this.branching = new Uint8Array(nodes.length);
    nodes.forEach((n, i) => {
      this.index.set(n.name, i);
    });
    for (const [k, n] of nodes.entries()) {
      const spec = kindSpec(n.kind);
      if (spec?.ownLimit) this.ownLimit[k] = 1;
      // The graph's successors end with the on_limit target; names of no node are left out.
      const out: number[] = [];
      for (const t of graph.successors(n.name)) {
        const i = this.index.get(t);
        if (i !== undefined) out.push(i);
      }
      this.onLimit.push(typeof n.def.on_limit === 'string' ? (this.index.get(n.def.on_limit) ?? -1) : -1);
      this.succ.push(out.length === 0 ? NONE : out);
      this.ends.push(graph.endsRuns(n.name));
      const starts: ChainStart[] = [];
      for (const c of childrenOf(spec, n.def)) {
        const i = this.index.get(c.name);
        if (i === undefined) continue;
        starts.push({ target: i, how: c.how, field: c.field });
        if (c.how === 'branch') this.branching[k] = 1;
      }
      const refs = nodeToolRefs(n);
      for (const r of refs) {
        const i = this.index.get(r.node);
        if (i !== undefined) starts.push({ target: i, how: 'tool', field: r.field, always: r.always });
      }
      this.starts.push(starts);
      this.toolRefs.push(refs);
    }
    this.start = start === undefined ? (nodes.length > 0 ? 0 : -1) : (this.index.get(start) ?? -1);
  }

  /** The nodes where a walk from `from` may stop: reachable along chain edges and ending runs. */
  chainEnds(from: number): readonly number[] {
    const memo = this.endMemo.get(from);
    if (memo) return memo;
    // One stamp array for every search (a fresh array per chain start cost O(nodes) each: quadratic
    // in files with thousands of parallel branches); the stamp says which search saw a node.
    this.stamps ??= new Uint32Array(this.nodes.length);
    const seen = this.stamps;
    const stamp = ++this.stamp;
    const queue = [from];
    seen[from] = stamp;
    const found: number[] = [];
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q]!;
      if (this.ends[i]) found.push(i);
      for (const j of this.succ[i]!) {
        if (seen[j] === stamp) continue;
        seen[j] = stamp;
        queue.push(j);
      }
    }
    this.endMemo.set(from, found);
    return found;
  }

  private wired: { entries: Entry[][]; dependents: number[][] } | undefined;

  /**
   * The ways into each node, and the nodes whose state depends on each node's (its successors,
   * the chains it starts, and the owners of the chains it ends). Built once, shared by dataflows.
   */
  wiring(): { entries: readonly (readonly Entry[])[]; dependents: readonly (readonly number[])[] } {
    if (this.wired) return this.wired;
    const n = this.nodes.length;
    const entries: Entry[][] = [];
    const dependents: number[][] = [];
    for (let i = 0; i < n; i++) {
      entries.push([]);
      dependents.push([]);
    }
    for (let i = 0; i < n; i++) {
      const succ = this.succ[i]!;
      succ.forEach((j, k) => {
        // The on_limit target is listed last, after the next targets.
        const limit = this.onLimit[i]! >= 0 && k === succ.length - 1;
        entries[j]!.push({ from: i, how: limit ? 'limit' : 'next' });
        dependents[i]!.push(j);
      });
      for (const s of this.starts[i]!) {
        entries[s.target]!.push({ from: i, how: s.how });
        dependents[i]!.push(s.target);
        for (const e of this.chainEnds(s.target)) {
          dependents[e]!.push(i);
          if (s.how === 'body') dependents[e]!.push(s.target);
        }
      }
    }
    // The on_limit target of the start node reads the start's other ways in (see Dataflow).
    const lim = this.start >= 0 ? this.onLimit[this.start]! : -1;
    if (lim >= 0) for (const e of entries[this.start]!) dependents[e.from]!.push(lim);
    this.wired = { entries, dependents };
    return this.wired;
  }

  private reached: Uint8Array | undefined;

  /** Every node a run from `start` can execute: chain edges, chains started, `node:` tools. */
  reachable(): Uint8Array {
    this.reached ??= this.reach(this.start < 0 ? [] : [this.start], true);
    return this.reached;
  }

  /** 1 for every node reached from `seeds` (included) along chain edges, and chains started with `starts`. */
  reach(seeds: readonly number[], starts: boolean): Uint8Array {
    const seen = new Uint8Array(this.nodes.length);
    const queue = [...seeds];
    for (const i of queue) seen[i] = 1;
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q]!;
      const next = starts ? [...this.succ[i]!, ...this.starts[i]!.map((s) => s.target)] : this.succ[i]!;
      for (const j of next) {
        if (seen[j]) continue;
        seen[j] = 1;
        queue.push(j);
      }
    }
    return seen;
  }
}
