import type { ChildOptions, CompiledNode, NodeKindImpl } from '../engine/contracts.js';
import { walk } from '../engine/walk.js';
import type { MapDef } from '../schema/map.js';
import { branchPath, checkStartNode, fanOut } from './fanout.js';

/** Default number of items a map node runs at once. */
const DEFAULT_MAP_CONCURRENCY = 4;

/** The items of a rendered list: a JSON array's elements, otherwise the non-empty lines (trimmed). */
export function parseItems(text: string): unknown[] {
  const t = text.trim();
  if (t.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(t);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Not JSON after all (e.g. a line starting with "[x]"): read it as lines.
    }
  }
  const items: string[] = [];
  for (const line of t.split('\n')) {
    const s = line.trim();
    if (s !== '') items.push(s);
  }
  return items;
}

/**
 * Map: renders `items`, runs `node` and its next chain once per item in a child scope with
 * ctx.item and ctx.index, `concurrency` at a time; the output is the list of the items' outputs, in
 * order (each a structured value when its node has an output_schema, else its text), as JSON text.
 */
export const mapImpl: NodeKindImpl<MapDef> = {
  compile(def, base, cc) {
    checkStartNode(cc, base.name, def.node, 'node');
    const itemsTemplate = cc.template(def.items, 'items');
    const start = def.node;
    const concurrency = def.concurrency ?? DEFAULT_MAP_CONCURRENCY;
    const continueOnError = def.on_error === 'continue';
    // The items' first node, found on the first execution: a loaded hatchery never changes.
    let startNode: CompiledNode | undefined;
    return {
      ...base,
      exec: async (scope) => {
        const seq = scope.seq;
        // itemsTemplate is only undefined when loading failed, and then nothing runs.
        const items = parseItems(scope.render(itemsTemplate!));
        startNode ??= scope.hatchery.nodes.get(start);
        const first = startNode ?? start;
        // One options object for every item: child() copies what it reads.
        const opts: ChildOptions = { signal: undefined, path: undefined, item: 0, outUnread: true };
        const itemScope = (i: number, signal: AbortSignal) => {
          opts.signal = signal;
          opts.path = branchPath(scope, seq, i);
          opts.item = i;
          return scope.child({ item: items[i], index: i }, opts);
        };
        const results = await fanOut(scope, {
          count: items.length,
          concurrency,
          continueOnError,
          field: 'node',
          name: (i) => `${start}[${i}]`,
          start: () => start,
          run: (i, signal) => walk(itemScope(i, signal), first),
        });
        // An item keeps its structured value (an output_schema's), as a single node's output does.
        const outputs = results.map((r) => (r.value === undefined ? r.text : r.value));
        return { text: JSON.stringify(outputs), value: outputs };
      },
    };
  },
};
