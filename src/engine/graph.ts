/**
 * The graph of one hatchery file, analysed once per load from its validated definition: successors,
 * paths back, the node where runs end, conversation targets. Node kinds ask it instead of scanning the
 * definition's node list, so a file of n nodes costs O(n) here however many nodes ask.
 */
import { END } from '../schema/names.js';

/** The fields of a validated node the graph reads. */
export interface GraphNodeDef {
  next?: string | string[];
  on_limit?: string;
  output_schema?: Record<string, unknown>;
  conversation?: string;
  desc?: string;
}

/** One node as the loader validated it: its (possibly generated) name, its kind, its definition. */
export interface GraphNode {
  readonly name: string;
  readonly kind: string;
  readonly def: GraphNodeDef;
}

const NONE: readonly string[] = [];

/** The routing structure of one hatchery file; immutable, built once per load. */
export class HatcheryGraph {
  /** The node runs start from: `start`, else the first node. */
  readonly start: string | undefined;
  /** Every node name of the file. */
  readonly names: ReadonlySet<string>;
  /** Drones some other drone continues with `conversation` (their message history must be kept). */
  readonly conversationTargets: ReadonlySet<string>;
  /** The output_schema of the one node where runs end, if exactly one reachable node ends them. */
  readonly finalOutputSchema: Record<string, unknown> | undefined;
  private readonly byName = new Map<string, GraphNode>();
  private readonly edges = new Map<string, readonly string[]>();

  constructor(start: string | undefined, nodes: readonly GraphNode[]) {
    this.start = start ?? nodes[0]?.name;
    const targets = new Set<string>();
    for (const n of nodes) {
      this.byName.set(n.name, n);
      const { next, on_limit: onLimit, conversation } = n.def;
      const list = next === undefined ? NONE : typeof next === 'string' ? [next] : next;
      const out = list.filter((t) => t !== END);
      if (onLimit !== undefined) out.push(onLimit);
      this.edges.set(n.name, out.length === 0 ? NONE : out);
      if (conversation !== undefined) targets.add(conversation);
    }
    this.names = new Set(this.byName.keys());
    this.conversationTargets = targets;
    this.finalOutputSchema = this.findFinalOutputSchema();
  }

  /** The node named `name`, if the file has one. */
  node(name: string): GraphNode | undefined {
    return this.byName.get(name);
  }

  /** The nodes `name` may hand over to: its `next` entries (END aside) and its `on_limit`. */
  successors(name: string): readonly string[] {
    return this.edges.get(name) ?? NONE;
  }

  /** True when a run may end after `name`: it has no `next`, or END is among its entries. */
  endsRuns(name: string): boolean {
    const next = this.byName.get(name)?.def.next;
    return (
      next === undefined || next === END || (Array.isArray(next) && (next.length === 0 || next.includes(END)))
    );
  }

  /** The shortest successor path from `from` to `to` (both included), or undefined when `to` is unreachable. */
  pathBack(from: string, to: string): string[] | undefined {
    const prev = new Map<string, string>([[from, '']]);
    const queue = [from];
    for (let q = 0; q < queue.length; q++) {
      const cur = queue[q]!;
      for (const t of this.successors(cur)) {
        if (prev.has(t)) continue;
        prev.set(t, cur);
        if (t === to) {
          const path = [t];
          for (let p = cur; p; p = prev.get(p)!) path.unshift(p);
          return path;
        }
        queue.push(t);
      }
    }
    return undefined;
  }

  /**
   * Follows successors from the start node; when exactly one reachable node ends runs, its
   * output_schema is the hatchery's (the MCP tool's outputSchema). Branch and loop bodies are not on
   * this path, so their schemas never count.
   */
  private findFinalOutputSchema(): Record<string, unknown> | undefined {
    if (this.start === undefined) return undefined;
    const seen = new Set<string>();
    let end: GraphNode | undefined;
    let ends = 0;
    const queue = [this.start];
    while (queue.length > 0) {
      const name = queue.pop()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const n = this.byName.get(name);
      if (!n) continue;
      if (this.endsRuns(name)) {
        end = n;
        ends++;
      }
      queue.push(...this.successors(name));
    }
    return ends === 1 ? end!.def.output_schema : undefined;
  }
}
