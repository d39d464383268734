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

/** Slots per chunk: a power of two, so an index splits with a shift and a mask. */
const CHUNK_BITS = 8;
const CHUNK = 1 << CHUNK_BITS;
const MASK = CHUNK - 1;

/**
 * The length of chunk `c` for `total` node indexes: CHUNK, or what is left of them in the last chunk
 * (a one-node run holds one slot, not 256: 4 KiB more per served call otherwise). At least `at + 1`.
 */
function chunkLength(total: number, c: number, at: number): number {
  return Math.min(CHUNK, Math.max(total - (c << CHUNK_BITS), at + 1));
}

/**
 * Outputs by node index, with the order of first writes; see the file's comment. Values and order are
 * kept in chunks of CHUNK entries: one array grown to 100,000 entries was copied into larger ones as it
 * grew (about twice its size in all), and past about 128 KiB V8 puts such an array in its
 * large-object space, which every old-generation collection walks; chunks of 2 KiB are young objects
 * like the run's others, and an entry is written where it stays.
 */
export class OutSlots {
  /** Node names by index: a template caches its slot against this array (one per loaded file). */
  readonly names: readonly string[];
  /** Values by node index (chunk index >> CHUNK_BITS), EMPTY where none; chunks made when first written. */
  private readonly values: (unknown[] | undefined)[] = [];
  /** Indexes in the order of their first write, CHUNK to a chunk: the dictionary's key order. */
  private readonly order: number[][] = [];
  /** Entries in `order`. */
  private count = 0;
  /** The dictionary, once built: from then on the only copy, written by the scope directly. */
  dict: Record<string, unknown> | undefined = undefined;
  /** The entries the dictionary was built with (0 before). */
  entries = 0;

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
    const c = index >> CHUNK_BITS;
    while (values.length <= c) values.push(undefined);
    let chunk = values[c];
    const at = index & MASK;
    if (chunk === undefined) {
      chunk = new Array<unknown>(chunkLength(this.names.length, c, at)).fill(EMPTY);
      values[c] = chunk;
    }
    // An index past the file's last node (none today) still gets a slot of its own.
    while (chunk.length <= at) chunk.push(EMPTY);
    if (chunk[at] === EMPTY) this.ordered(index);
    chunk[at] = value;
  }

  /** Appends `index` to the order of first writes. */
  private ordered(index: number): void {
    const count = this.count;
    const at = count & MASK;
    const order = this.order;
    let chunk = order[count >> CHUNK_BITS];
    if (chunk === undefined) {
      chunk = new Array<number>(chunkLength(this.names.length, count >> CHUNK_BITS, 0)).fill(0);
      order.push(chunk);
    }
    if (at < chunk.length) chunk[at] = index;
    else chunk.push(index);
    this.count = count + 1;
  }

  /** The output of the node at `index`; undefined when it wrote none (or there is no such node). */
  get(index: number): unknown {
    if (index < 0) return undefined;
    const chunk = this.values[index >> CHUNK_BITS];
    const v = chunk === undefined ? undefined : chunk[index & MASK];
    return v === EMPTY ? undefined : v;
  }

  /** The dictionary of these outputs, built once; `vars.out` is pointed at it. */
  materialize(vars?: { out: unknown }): Record<string, unknown> {
    let dict = this.dict;
    if (dict === undefined) {
      dict = Object.create(null) as Record<string, unknown>;
      const { order, values, names, count } = this;
      for (let i = 0; i < count; i++) {
        const at = order[i >> CHUNK_BITS]![i & MASK]!;
        dict[names[at]!] = values[at >> CHUNK_BITS]![at & MASK];
      }
      this.dict = dict;
      this.entries = count;
      // Nothing reads the slots again: drop them rather than keep a second copy alive.
      this.values.length = 0;
      this.order.length = 0;
      this.count = 0;
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
