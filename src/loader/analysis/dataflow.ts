/**
 * Which ctx variables and node outputs are set when each node runs: a forward dataflow over the run
 * structure, with two bitsets per point ("set on every path" and "set on some path") and a worklist,
 * so a file of n nodes costs about n times the bitset width. Mirrors the run-time semantics:
 * - a node's `save_output` and `out.<node>` are set after it runs;
 * - parallel branches and map items run in child scopes: their `save_output` writes reach the
 *   parent, their `out.*` stay inside, and the parallel sets `out.<branch>` to each branch's result;
 * - a loop's body runs in the loop's own scope (everything it sets stays), with `ctx.iteration`;
 * - a map's chain sees `ctx.item` and `ctx.index`; a `node:` tool's chain sees `ctx.input`;
 * - `on_limit` is taken instead of a node that ran max_visits times (or after a loop's last iteration).
 */
import { type FlowState, hasBit, meetInto, type Presence, setBit } from './bitset.js';
import type { Entry, Flow } from './flow.js';
import { type Region, setters } from './region.js';

/** Where in a node a template is rendered. */
export type RenderPoint = 'in' | 'out' | 'after-chains';

/** The dataflow of one file over a fixed set of ctx names and node outputs. */
export class Dataflow {
  private readonly words: number;
  private readonly bits = new Map<string, number>();
  /** The names some node saves: the only ctx writes that leave a child scope (scope.save). */
  private readonly saveMask: Uint32Array;
  /** Scratch state of chainEnd. */
  private readonly endState: FlowState;
  /** Per node: its out.<node> bit and its save_output bit (-1 when not analysed). */
  private readonly gen: Int32Array;
  private readonly entries: readonly (readonly Entry[])[];
  private readonly dependents: readonly (readonly number[])[];
  private readonly inMust: Uint32Array;
  private readonly inMay: Uint32Array;
  private readonly outMust: Uint32Array;
  private readonly outMay: Uint32Array;
  /** Reached flags by slot (see pos). */
  private readonly inReached: Uint8Array;
  private readonly outReached: Uint8Array;
  /** Region runs: node -> slot (0: outside, a zero state and the full run's reached flags). */
  private readonly slot: Int32Array | undefined;
  /** What entering a chain adds: ctx.item and ctx.index (map), ctx.input (node: tool), ctx.iteration (loop). */
  private readonly mapAdds: Uint32Array;
  private readonly toolAdds: Uint32Array;
  private readonly bodyAdds: Uint32Array;
  private readonly region: Region | undefined;
  /**
   * Per parallel node: what its branches' chains may save (their ends' may-bits within saveMask), as
   * of the parallel's last evaluation. Each branch reads it instead of walking every sibling's end: the
   * walk made a file with n branches cost n^2 per pass (35 s to load 8,000 branches).
   */
  private readonly branchSaves = new Map<number, Uint32Array>();

  constructor(
    private readonly flow: Flow,
    ctxNames: Iterable<string>,
    outNames: Iterable<string>,
    region?: Region,
  ) {
    this.region = region;
    for (const c of ctxNames) if (!this.bits.has(`ctx:${c}`)) this.bits.set(`ctx:${c}`, this.bits.size);
    for (const o of outNames) if (!this.bits.has(`out:${o}`)) this.bits.set(`out:${o}`, this.bits.size);
    this.words = Math.max(1, Math.ceil(this.bits.size / 32));
    this.saveMask = new Uint32Array(this.words);
    this.endState = { must: new Uint32Array(this.words), may: new Uint32Array(this.words) };
    this.slot = region?.slot;
    // State arrays hold the region's nodes only (after slot 0, the zeros of every node outside it),
    // so a slice of a huge file costs its region, not the file.
    const slots = region ? region.nodes.length + 1 : flow.nodes.length;
    // Per slot: its out.<node> bit and its save_output bit, from the setters of each analysed variable
    // (a loop over the variables, not the nodes: a slice of a huge file touches its own setters only).
    this.gen = new Int32Array(2 * slots).fill(-1);
    const byKey = setters(flow);
    for (const [key, b] of this.bits) {
      const isCtx = key.startsWith('ctx:');
      for (const i of byKey.get(key) ?? []) {
        if (isCtx) setBit(this.saveMask, 0, b);
        const at = this.pos(i);
        if (region && at === 0) continue;
        this.gen[2 * at + (isCtx ? 1 : 0)] = b;
      }
    }
    const mask = (...names: string[]) => {
      const m = new Uint32Array(this.words);
      for (const c of names) {
        const b = this.bits.get(`ctx:${c}`);
        if (b !== undefined) setBit(m, 0, b);
      }
      return m;
    };
    this.mapAdds = mask('item', 'index');
    this.toolAdds = mask('input');
    this.bodyAdds = mask('iteration');
    const size = slots * this.words;
    this.inMust = new Uint32Array(size);
    this.inMay = new Uint32Array(size);
    this.outMust = new Uint32Array(size);
    this.outMay = new Uint32Array(size);
    this.inReached = new Uint8Array(slots);
    this.outReached = new Uint8Array(slots);
    ({ entries: this.entries, dependents: this.dependents } = flow.wiring());
  }

  /** Where node `i`'s state is: its slot in a region run (0 outside), else `i`. */
  private pos(i: number): number {
    return this.slot ? this.slot[i]! : i;
  }

  /** Whether node `i` is reached (IN) or completes (OUT); outside a region, as the full run found. */
  private isReached(i: number, point: 'in' | 'out'): boolean {
    const out = point === 'out';
    const at = this.pos(i);
    if (this.slot && at === 0) return (out ? this.region!.outReached : this.region!.inReached)[i] === 1;
    return (out ? this.outReached : this.inReached)[at] === 1;
  }

  /** Adds the output and save_output bits of node `i`. */
  private addGen(i: number, must: Uint32Array | undefined, may: Uint32Array): void {
    const at = this.pos(i);
    for (let k = 2 * at; k < 2 * at + 2; k++) {
      const b = this.gen[k]!;
      if (b < 0) continue;
      if (must) setBit(must, 0, b);
      setBit(may, 0, b);
    }
  }

  /** The bit of a variable (`ctx` or `out`), if it is analysed. */
  bit(kind: 'ctx' | 'out', name: string): number | undefined {
    return this.bits.get(`${kind}:${name}`);
  }

  /** Runs the worklist to its fixed point from the start node. */
  run(): void {
    const { flow } = this;
    if (flow.start < 0) return;
    const region = this.region;
    const slot = this.slot;
    const queued = new Uint8Array(region ? region.nodes.length + 1 : flow.nodes.length);
    const queue: number[] = region ? [...region.nodes] : [flow.start];
    for (const i of queue) queued[this.pos(i)] = 1;
    const must = new Uint32Array(this.words);
    const may = new Uint32Array(this.words);
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q]!;
      queued[this.pos(i)] = 0;
      if (!this.computeIn(i, must, may)) continue;
      // A parallel whose branches' saves changed re-queues its branches, which read them (see branchSaves).
      if (this.refreshBranchSaves(i)) {
        for (const s of this.flow.starts[i]!) {
          const d = s.target;
          if (s.how !== 'branch' || (slot && slot[d] === 0) || queued[this.pos(d)]) continue;
          queued[this.pos(d)] = 1;
          queue.push(d);
        }
      }
      let changed = this.store(i, must, may, this.inMust, this.inMay, this.inReached);
      if (this.computeOut(i, must, may, true))
        changed = this.store(i, must, may, this.outMust, this.outMay, this.outReached) || changed;
      if (!changed) continue;
      for (const d of this.dependents[i]!) {
        if (slot && slot[d] === 0) continue;
        if (queued[this.pos(d)]) continue;
        queued[this.pos(d)] = 1;
        queue.push(d);
      }
      // The queue array only grows; drop what was processed now and then so it stays O(n).
      if (q > 4096 && q * 2 > queue.length) {
        queue.splice(0, q + 1);
        q = -1;
      }
    }
  }

  /** The state where a template of node `i` renders, or undefined when no run gets there. */
  stateAt(i: number, point: RenderPoint): FlowState | undefined {
    if (!this.isReached(i, 'in')) return undefined;
    const w = this.words;
    const at = this.pos(i) * w;
    if (point === 'in')
      return { must: this.inMust.subarray(at, at + w), may: this.inMay.subarray(at, at + w) };
    if (point === 'out') {
      if (!this.isReached(i, 'out')) return undefined;
      return { must: this.outMust.subarray(at, at + w), may: this.outMay.subarray(at, at + w) };
    }
    const must = new Uint32Array(w);
    const may = new Uint32Array(w);
    return this.computeOut(i, must, may, false) ? { must, may } : undefined;
  }

  /** Reached flags after run(): the region of a slice run needs those of a full run. */
  reached(): { inReached: Uint8Array; outReached: Uint8Array } {
    return { inReached: this.inReached, outReached: this.outReached };
  }

  /** Whether `bit` is set on every, some or no path at `state`. */
  static presence(state: FlowState, bit: number | undefined): Presence {
    if (bit === undefined) return 'none';
    if (hasBit(state.must, 0, bit)) return 'all';
    return hasBit(state.may, 0, bit) ? 'some' : 'none';
  }

  private store(
    i: number,
    must: Uint32Array,
    may: Uint32Array,
    toMust: Uint32Array,
    toMay: Uint32Array,
    reached: Uint8Array,
  ): boolean {
    const w = this.words;
    const slot = this.pos(i);
    const at = slot * w;
    let changed = reached[slot] === 0;
    reached[slot] = 1;
    for (let k = 0; k < w; k++) {
      if (toMust[at + k] !== must[k] || toMay[at + k] !== may[k]) changed = true;
      toMust[at + k] = must[k]!;
      toMay[at + k] = may[k]!;
    }
    return changed;
  }

  /** Meets every way into `i`; false when none is reached yet. */
  private computeIn(i: number, must: Uint32Array, may: Uint32Array, notFirst = false): boolean {
    const w = this.words;
    must.fill(0xffffffff);
    may.fill(0);
    let any = false;
    const meet = meetInto;
    if (i === this.flow.start && !notFirst) {
      any = true;
      must.fill(0);
    }
    for (const e of this.entries[i]!) {
      const p = e.from;
      const at = this.pos(p) * w;
      switch (e.how) {
        case 'next':
          if (this.isReached(p, 'out')) any = meet(must, may, w, this.outMust, at, this.outMay, at);
          break;
        case 'limit': {
          // Taken instead of a node that already ran (max_visits), or after a loop's last iteration.
          const loopOnly = this.flow.ownLimit[p] === 1 && this.flow.nodes[p]!.def.max_visits === undefined;
          if (loopOnly) {
            if (this.isReached(p, 'out')) any = meet(must, may, w, this.outMust, at, this.outMay, at);
          } else if (this.isReached(p, 'in')) {
            // The redirect happens where `p` was about to run (its IN), after `p` ran max_visits
            // times in this run: its save_output went up to this scope (or a parent it reads),
            // its out.<p> may have stayed in a sibling branch's scope.
            // A start node is never redirected on its first visit: only its other ways in count.
            let srcMust = this.inMust;
            let srcMay = this.inMay;
            let from = at;
            if (p === this.flow.start && !notFirst) {
              srcMust = new Uint32Array(w);
              srcMay = new Uint32Array(w);
              from = 0;
              if (!this.computeIn(p, srcMust, srcMay, true)) break;
            }
            const save = this.gen[2 * this.pos(p) + 1]!;
            const saveBit = new Uint32Array(w);
            if (save >= 0) setBit(saveBit, 0, save);
            any = meet(must, may, w, srcMust, from, srcMay, from, saveBit);
            this.addGen(p, undefined, may);
          }
          break;
        }
        case 'branch':
          if (this.isReached(p, 'in')) {
            any = meet(must, may, w, this.inMust, at, this.inMay, at);
            // Sibling branches run at the same time: what they save may or may not be there yet.
            const saves = this.siblingSaves(p);
            for (let k = 0; k < w; k++) may[k]! |= saves[k]!;
          }
          break;
        case 'map':
        case 'tool': {
          const adds = e.how === 'map' ? this.mapAdds : this.toolAdds;
          if (this.isReached(p, 'in')) any = meet(must, may, w, this.inMust, at, this.inMay, at, adds);
          break;
        }
        case 'body': {
          if (!this.isReached(p, 'in')) break;
          any = meet(must, may, w, this.inMust, at, this.inMay, at, this.bodyAdds);
          // Later iterations start with what the previous one left.
          const end = this.chainEnd(i);
          if (end) any = meet(must, may, w, end.must, 0, end.may, 0, this.bodyAdds);
          break;
        }
      }
    }
    return any;
  }

  /** What the branches of parallel `p` may save, met over their chains' reached ends. */
  private collectBranchSaves(p: number, into: Uint32Array): Uint32Array {
    const w = this.words;
    into.fill(0);
    for (const s of this.flow.starts[p]!) {
      if (s.how !== 'branch') continue;
      const end = this.chainEnd(s.target);
      if (end) for (let k = 0; k < w; k++) into[k]! |= end.may[k]! & this.saveMask[k]!;
    }
    return into;
  }

  /**
   * The saves a branch of `p` sees from its siblings. Kept per parallel when `p` is computed in this
   * run (the worklist refreshes it each time `p` runs, after any branch end changed); a parallel
   * outside a region is never computed, so its branches collect the saves themselves, as before.
   */
  private siblingSaves(p: number): Uint32Array {
    const kept = this.branchSaves.get(p);
    if (kept) return kept;
    const saves = this.collectBranchSaves(p, new Uint32Array(this.words));
    if (this.slot?.[p] !== 0) this.branchSaves.set(p, saves);
    return saves;
  }

  /** Recomputes the branch saves kept for parallel `i`; true when they changed. */
  private refreshBranchSaves(i: number): boolean {
    if (this.flow.branching[i] !== 1) return false;
    const fresh = this.collectBranchSaves(i, new Uint32Array(this.words));
    const kept = this.branchSaves.get(i);
    this.branchSaves.set(i, fresh);
    if (!kept) return true;
    for (let k = 0; k < fresh.length; k++) if (fresh[k] !== kept[k]) return true;
    return false;
  }

  /**
   * The state where a walk from `from` ends: met over the chain's reached end nodes. Written into
   * one scratch pair (an allocation per call was most of the garbage of huge files): callers use it
   * at once, before the next call.
   */
  private chainEnd(from: number): FlowState | undefined {
    const w = this.words;
    const must = this.endState.must;
    const may = this.endState.may;
    let found = false;
    for (const e of this.flow.chainEnds(from)) {
      if (!this.isReached(e, 'out')) continue;
      const at = this.pos(e) * w;
      if (!found) {
        must.set(this.outMust.subarray(at, at + w));
        may.set(this.outMay.subarray(at, at + w));
        found = true;
        continue;
      }
      for (let k = 0; k < w; k++) {
        must[k]! &= this.outMust[at + k]!;
        may[k]! |= this.outMay[at + k]!;
      }
    }
    return found ? this.endState : undefined;
  }

  /** The state after `i` ran (from its stored IN); false when `i` never completes. */
  private computeOut(i: number, must: Uint32Array, may: Uint32Array, withGen: boolean): boolean {
    const w = this.words;
    const at = this.pos(i) * w;
    for (let k = 0; k < w; k++) {
      must[k] = this.inMust[at + k]!;
      may[k] = this.inMay[at + k]!;
    }
    const node = this.flow.nodes[i]!;
    const mask = this.saveMask;
    const addEnd = (end: FlowState, sure: boolean, savesOnly: boolean) => {
      for (let k = 0; k < w; k++) {
        const m = savesOnly ? mask[k]! : 0xffffffff;
        if (sure) must[k]! |= end.must[k]! & m;
        may[k]! |= end.may[k]! & m;
      }
    };
    for (const s of this.flow.starts[i]!) {
      const end = this.chainEnd(s.target);
      switch (s.how) {
        case 'branch': {
          if (!end) return false;
          addEnd(end, node.def.on_error !== 'continue', true);
          const o = this.bit('out', this.flow.nodes[s.target]!.name);
          if (o !== undefined) {
            setBit(must, 0, o);
            setBit(may, 0, o);
          }
          break;
        }
        case 'map':
          // A map over no items runs nothing: what its chain saves is set on some paths only.
          if (end) addEnd(end, false, true);
          break;
        case 'body': {
          if (!end) return false;
          addEnd(end, true, false);
          const it = this.bit('ctx', 'iteration');
          if (it !== undefined) {
            setBit(must, 0, it);
            setBit(may, 0, it);
          }
          break;
        }
        case 'tool':
          // A baneling always calls its one tool; a drone's model may call a tool or not.
          if (end) addEnd(end, s.always === true, true);
          break;
      }
    }
    if (withGen) this.addGen(i, must, may);
    return true;
  }
}
