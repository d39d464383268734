/**
 * The memo of a resumed run: node executions that finished in earlier attempts, read back from the
 * run's journal, served to walk() instead of running those nodes again.
 */
import type { CompiledNode, NodeMemo, NodeResult, ToolResult } from '../engine/contracts.js';
import type { Usage } from '../providers/types.js';
import { kindSpec } from '../schema/nodes.js';
import type { JournalRecord } from './store.js';

/** A finished node execution as the journal recorded it. */
interface Finished {
  /** Its scope path, and the top-level sequence number it sits under (see topSeq). */
  path: string;
  top: number;
  node: string;
  output: string;
  value?: unknown;
  usage?: Usage;
  chose?: string | null;
}

/** Options of buildMemo. */
export interface MemoOptions {
  /** Serve nothing from the first top-level execution of this node onwards (`runs resume --from`). */
  from?: string;
  /** Node names whose definition changed since the run started (resume --force): nothing is served from the first onwards. */
  changed?: ReadonlySet<string>;
  /**
   * Nodes that run again with everything after them although they finished: drones whose message
   * history a later drone continues (`conversation`), since the journal does not hold that history.
   */
  rerun?: ReadonlySet<string>;
}

/** What buildMemo found: the memo, and where serving stops (for the `resumed` record and messages). */
export interface BuiltMemo {
  memo: NodeMemo;
  /** Finished executions the memo can serve. */
  size: number;
  /** Top-level sequence number from which nothing is served (undefined: serve all that finished). */
  cut: number | undefined;
  /** The node at `cut`, when the journal names it. */
  cutNode: string | undefined;
}

/** The top-level sequence number a scope path and seq sit under ('' and 7 -> 7; '/3.1/2.0' -> 3). */
function topSeq(path: string, seq: number): number {
  if (path === '') return seq;
  const dot = path.indexOf('.', 1);
  return Number(path.slice(1, dot));
}

/** The (scope path, seq) pairs enclosing a branch path: '/3.1/5.0' -> ['', 3], ['/3.1', 5]. */
function enclosing(path: string): [string, number][] {
  const out: [string, number][] = [];
  let at = 0;
  while (at < path.length) {
    const slash = path.indexOf('/', at + 1);
    const end = slash < 0 ? path.length : slash;
    const seg = path.slice(at + 1, end);
    out.push([path.slice(0, at), Number(seg.slice(0, seg.indexOf('.')))]);
    at = end;
  }
  return out;
}

const keyOf = (path: string, seq: number) => `${path}#${seq}`;

/**
 * The finished executions of a run, by scope path and seq, across all its attempts: a later attempt's
 * record replaces an earlier one, and a `resumed` record with a `cut` drops what that attempt did not
 * take over (it ran those nodes again, maybe along another route).
 */
export function finishedExecutions(records: readonly JournalRecord[]): Map<string, Finished> {
  const done = new Map<string, Finished>();
  for (const r of records) {
    if (r.type === 'resumed' && typeof r.cut === 'number') {
      for (const [k, f] of done) if (f.top >= r.cut) done.delete(k);
      continue;
    }
    if (r.type !== 'node_end' || typeof r.path !== 'string' || typeof r.seq !== 'number') continue;
    if (typeof r.node !== 'string' || (r.depth !== undefined && r.depth !== 0)) continue;
    const output = typeof r.output === 'string' ? r.output : '';
    const f: Finished = { path: r.path, top: topSeq(r.path, r.seq), node: r.node, output };
    if (r.value !== undefined) f.value = r.value;
    if (r.usage !== undefined) f.usage = r.usage as Usage;
    if (r.chose !== undefined) f.chose = r.chose as string | null;
    done.set(keyOf(r.path, r.seq), f);
  }
  return done;
}

/** The results of keyed tool calls that returned (a call that threw has no key), by key. */
function keyedCalls(records: readonly JournalRecord[]): Map<string, ToolResult> {
  const calls = new Map<string, ToolResult>();
  for (const r of records) {
    if (r.type !== 'tool_call' || typeof r.key !== 'string') continue;
    const res: ToolResult = { text: typeof r.result === 'string' ? r.result : '', key: r.key };
    if (r.isError === true) res.isError = true;
    calls.set(r.key, res);
  }
  return calls;
}

/**
 * Builds the memo of a resumed run from its journal records. A node is served when the journal has a
 * finished execution of the same node (by name) at the same scope path and seq, its definition did
 * not change, it is no container, and it comes before the cut (`from`, the first changed node). Where
 * the run's route diverges from the journal's, nothing later in that scope is served.
 */
export function buildMemo(records: readonly JournalRecord[], options: MemoOptions = {}): BuiltMemo {
  const done = finishedExecutions(records);
  let cut: number | undefined;
  let cutNode: string | undefined;
  const lower = (seq: number, node: string) => {
    if (cut === undefined || seq < cut) {
      cut = seq;
      cutNode = node;
    }
  };
  const { from, changed, rerun } = options;
  if (from !== undefined || (changed && changed.size > 0) || (rerun && rerun.size > 0)) {
    let fromTop: number | undefined;
    let fromBranch: number | undefined;
    for (const { path, top: t, node } of done.values()) {
      if (node === from) {
        if (path === '') fromTop = Math.min(fromTop ?? t, t);
        else fromBranch = Math.min(fromBranch ?? t, t);
      }
      // A branch's node cuts at the fan-out that holds it: that node runs again whole.
      if (changed?.has(node) || rerun?.has(node))
        lower(t, path === '' ? node : (done.get(keyOf('', t))?.node ?? node));
    }
    // --from names the node's first top-level execution; a node run only inside branches, their fan-out.
    const at = fromTop ?? fromBranch;
    if (at !== undefined) lower(at, fromTop !== undefined ? from! : (done.get(keyOf('', at))?.node ?? from!));
  }
  // Where serving stops, per scope path: the seq of the first execution not served.
  const stops = new Map<string, number>();
  if (cut !== undefined) stops.set('', cut);
  const stopped = (path: string, seq: number): boolean => {
    const own = stops.get(path);
    if (own !== undefined && seq >= own) return true;
    if (path === '' || stops.size === 0) return false;
    for (const [p, s] of enclosing(path)) {
      const at = stops.get(p);
      if (at !== undefined && s >= at) return true;
    }
    return false;
  };
  const stop = (path: string, seq: number) => {
    const own = stops.get(path);
    if (own === undefined || seq < own) stops.set(path, seq);
  };
  // A cut runs nodes again on purpose (--from, a changed node): their remote calls are made again too.
  const calls = cut === undefined ? keyedCalls(records) : new Map<string, ToolResult>();
  const memo: NodeMemo = {
    call: (key) => calls.get(key),
    take(path: string, seq: number, node: CompiledNode): NodeResult | undefined {
      // A container is never served whole: its leaves are.
      if (kindSpec(node.kind)?.container) return undefined;
      if (stopped(path, seq)) return undefined;
      const f = done.get(keyOf(path, seq));
      if (f === undefined || f.node !== node.name) {
        // Not finished, or the route diverged: everything after it in this scope runs for real.
        stop(path, seq);
        return undefined;
      }
      const r: NodeResult = { text: f.output };
      if (f.value !== undefined) r.value = f.value;
      if (f.usage !== undefined) r.usage = f.usage;
      if (f.chose !== undefined) r.next = f.chose;
      return r;
    },
  };
  return { memo, size: done.size, cut, cutNode };
}
