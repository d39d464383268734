/**
 * A top-level run's outputs kept by node index until something reads them as a whole.
 *
 * `out` is a dictionary keyed by node name. In a large file, building it costs more per node than the
 * rest of a step: V8 grows a dictionary by rehashing every key into a table twice as large, tables
 * larger than the caches at 100,000 keys (0.17–0.22 µs per node more than at 1,000). Most runs never
 * read it whole: their templates read `out.<node>`, which this reads by index. The first read of the
 * whole object (nunjucks, a script, a child scope, the run's result) builds exactly the dictionary the
 * run would have built: the same keys, inserted in the order of their first write, the latest values.
 */

/** A slot no node wrote yet. */
const EMPTY: unknown = Object.freeze({ empty: true });

/** Node names by index (position in the file), one array per loaded node map. */
const namesOf = new WeakMap<object, readonly string[]>();

/** What the slots need of a hatchery's nodes: their names and indexes. */
export type IndexedNodes = ReadonlyMap<string, { readonly name: string; readonly index: number }>;

function names(nodes: IndexedNodes): readonly string[] {
  let list = namesOf.get(nodes);
  if (list === undefined) {
    const made: string[] = [];
    for (const n of nodes.values()) {
      while (made.length <= n.index) made.push('');
      made[n.index] = n.name;
    }
    list = made;
    namesOf.set(nodes, list);
  }
  return list;
}

/** Outputs by node index, with the order of first writes; see the file's comment. */
export class OutSlots {
  /** Node names by index: a template caches its slot against this array (one per loaded file). */
  readonly names: readonly string[];
  /** Values by node index, EMPTY where none; grown as far as the highest index written. */
  private readonly values: unknown[] = [];
  /** Indexes in the order of their first write: the dictionary's key order. */
  private readonly order: number[] = [];
  /** The dictionary, once built: from then on the only copy, written by the scope directly. */
  dict: Record<string, unknown> | undefined = undefined;

  constructor(private readonly nodes: IndexedNodes) {
    this.names = names(nodes);
  }

  /** The index of node `name`, or -1 when no node has that name. */
  indexOf(name: string): number {
    const n = this.nodes.get(name);
    return n !== undefined && this.names[n.index] === name ? n.index : -1;
  }

  /** Writes the output of the node at `index` (the caller checked that the slots are still in use). */
  set(index: number, value: unknown): void {
    const values = this.values;
    while (values.length <= index) values.push(EMPTY);
    if (values[index] === EMPTY) this.order.push(index);
    values[index] = value;
  }

  /** The output of the node at `index`; undefined when it wrote none (or there is no such node). */
  get(index: number): unknown {
    const v = index < 0 ? undefined : this.values[index];
    return v === EMPTY ? undefined : v;
  }

  /** The dictionary of these outputs, built once; `vars.out` is pointed at it. */
  materialize(vars?: { out: unknown }): Record<string, unknown> {
    let dict = this.dict;
    if (dict === undefined) {
      dict = Object.create(null) as Record<string, unknown>;
      const { order, values, names } = this;
      for (let i = 0; i < order.length; i++) {
        const at = order[i]!;
        dict[names[at]!] = values[at];
      }
      this.dict = dict;
      // Nothing reads the slots again: drop them rather than keep a second copy alive.
      this.values.length = 0;
      this.order.length = 0;
    }
    if (vars !== undefined) vars.out = dict;
    return dict;
  }
}

/** Points `vars.out` at the dictionary its slots stand for, before nunjucks or the sandbox reads it. */
export function outAsDictionary(vars: { out: unknown }): void {
  const slots = vars.out;
  if (slots instanceof OutSlots) slots.materialize(vars);
}
