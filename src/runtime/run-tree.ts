/**
 * The shape of a run as a tree, built from its events (live) or its journal records (afterwards): one
 * model for the terminal view and the studio page, so both draw the same tree from the same rules.
 * Events find their parent through their place (EventPlace): a tool call id, else the enclosing step.
 */
import type { RunEvent } from '../engine/contracts.js';
import { addUsage, fullUsage, type Usage } from '../providers/types.js';

/** What a tree entry stands for. */
export type TreeKind = 'run' | 'node' | 'tool' | 'model';

/** Where an entry stands: running, done, failed, or waiting for an answer (a suspended ask). */
export type TreeStatus = 'running' | 'done' | 'failed' | 'waiting';

/** One entry of the tree: a run, a node execution, a tool call or a model call. */
export interface TreeEntry {
  /** Unique in the tree: `run`, `s<step>`, `c<call>`, `r<call or step>` for nested runs, `m<n>`. */
  id: string;
  kind: TreeKind;
  /** The node, tool or hatchery name; the model for model calls. */
  label: string;
  /** The node kind (drone, parallel...) of node entries. */
  nodeKind?: string;
  /** The map item (0-based) a node entry runs for. */
  item?: number;
  status: TreeStatus;
  /** Nesting below the root (0 for the run itself, 1 for its top-level nodes). */
  depth: number;
  /** Start time in milliseconds (the clock the caller passes, Date.now() by default). */
  start: number;
  /** Duration in milliseconds, once it ended. */
  ms?: number;
  usage?: Usage;
  error?: string;
  code?: string;
  /** A resumed run took this node's result from its journal. */
  replayed?: boolean;
  /** Model calls: retries so far, and the latest wait (a rate limit or an overload). */
  retries?: number;
  retryReason?: string;
  /** Until when (same clock as `start`) a retry waits; cleared when the call ends. */
  waitUntil?: number;
  rateLimited?: boolean;
  /** Model calls: the MCP client's model this one stands in for (client_fallback). */
  standIn?: string;
  /** The node's output, a tool's result (kept only when the tree is built with `keep: true`). */
  output?: string;
  /** A tool's arguments (only with `keep: true`). */
  args?: Record<string, unknown>;
  children: TreeEntry[];
}

/** A run event, or a journal record of one (nested runs are `nested_start` / `nested_end` there). */
export type TreeEvent =
  | RunEvent
  | (Omit<Extract<RunEvent, { type: 'run_start' }>, 'type' | 'runId'> & { type: 'nested_start' })
  | (Omit<Extract<RunEvent, { type: 'run_end' }>, 'type' | 'runId'> & { type: 'nested_end' });

/** Optional loose fields every event shape may carry, read without narrowing each case. */
interface Loose {
  item?: number;
  step?: number;
  parent?: number;
  call?: number;
  parentCall?: number;
}

/** Builds and updates the tree of one run (with its nested runs) from its events, in order. */
export class RunTree {
  readonly root: TreeEntry;
  private readonly steps = new Map<number, TreeEntry>();
  private readonly calls = new Map<number, TreeEntry>();
  private readonly runs = new Map<string, TreeEntry>();
  private models = 0;

  /** `keep` keeps outputs and tool arguments on the entries (the studio shows them; the terminal does not). */
  constructor(
    name: string,
    start: number,
    private readonly keep = false,
  ) {
    this.root = { id: 'run', kind: 'run', label: name, status: 'running', depth: 0, start, children: [] };
  }

  /** Applies one event at time `at`; returns the entry it created or changed, if any. */
  apply(e: TreeEvent, at: number = Date.now()): TreeEntry | undefined {
    const place = e as Loose;
    switch (e.type) {
      case 'run_start':
      case 'nested_start': {
        if (e.depth === 0) return undefined;
        const id = `r${place.call ?? place.parent ?? this.runs.size}`;
        const entry = this.add(this.parentOf(place), { id, kind: 'run', label: e.hatchery, start: at });
        this.runs.set(id, entry);
        return entry;
      }
      case 'run_end':
      case 'nested_end': {
        const entry =
          e.depth === 0 ? this.root : this.runs.get(`r${place.call ?? place.parent ?? this.runs.size - 1}`);
        if (!entry) return undefined;
        this.end(entry, e.ms, e.ok ? 'done' : e.code === 'INPUT_REQUIRED' ? 'waiting' : 'failed');
        if (!e.ok) {
          entry.error = e.error;
          entry.code = e.code;
        }
        if (e.depth === 0) entry.usage = { ...e.usage };
        return entry;
      }
      case 'node_start': {
        const entry = this.node(place, e.step, e.node, at, e.kind);
        if (place.item !== undefined) entry.item = place.item;
        return entry;
      }
      case 'node_end': {
        // A resumed run's node from the journal has no start event.
        const entry = this.steps.get(e.step) ?? this.node(place, e.step, e.node, at);
        this.end(entry, e.ms, 'done');
        if (e.usage && e.usage.inputTokens + e.usage.outputTokens > 0) entry.usage = e.usage;
        if (e.replayed) entry.replayed = true;
        if (this.keep) entry.output = e.output;
        return entry;
      }
      case 'node_error': {
        const entry = this.steps.get(e.step);
        if (!entry) return undefined;
        this.end(entry, e.ms, e.code === 'INPUT_REQUIRED' ? 'waiting' : 'failed');
        entry.error = e.error;
        entry.code = e.code;
        return entry;
      }
      case 'tool_start':
        return this.tool(e, at);
      case 'tool_call': {
        // Journals keep only the end of a call: its start is its end minus its duration.
        const entry = (e.call !== undefined ? this.calls.get(e.call) : undefined) ?? this.tool(e, at - e.ms);
        this.end(entry, e.ms, e.isError ? 'failed' : 'done');
        if (this.keep && e.result !== undefined) entry.output = e.result;
        if (e.isError && e.result !== undefined) entry.error = e.result;
        return entry;
      }
      case 'model_retry': {
        const entry = this.liveModel(e.step, e.call, e.model, at);
        entry.retries = e.attempt;
        entry.retryReason = e.reason;
        entry.rateLimited = e.rateLimited;
        entry.waitUntil = at + e.waitMs;
        return entry;
      }
      case 'model_call': {
        const entry = this.liveModel(e.step, e.call, e.model, at - e.ms);
        // The call's start is its end minus its duration (retries included).
        entry.start = Math.min(entry.start, at - e.ms);
        this.end(entry, e.ms, e.error === undefined ? 'done' : 'failed');
        entry.waitUntil = undefined;
        entry.id = `m${++this.models}`;
        if (e.usage) entry.usage = e.usage;
        if (e.error !== undefined) entry.error = e.error;
        if (e.retries) entry.retries = e.retries;
        if (e.standIn) entry.standIn = e.standIn;
        if (this.keep && e.text !== undefined) entry.output = e.text;
        return entry;
      }
    }
  }

  /** Node executions in the tree so far, nested runs' included. */
  get stepCount(): number {
    return this.steps.size;
  }

  /** The entry of node execution `step`, if the tree has it. */
  step(step: number): TreeEntry | undefined {
    return this.steps.get(step);
  }

  /** Usage of the run so far: the sum of its model calls (the run_end total once it ended). */
  usage(): Usage {
    if (this.root.usage) return this.root.usage;
    const total = fullUsage(0, 0);
    walkTree(this.root, (t) => {
      if (t.kind === 'model' && t.usage) addUsage(total, t.usage);
    });
    return total;
  }

  private parentOf(place: Loose): TreeEntry {
    if (place.call !== undefined) {
      return this.runs.get(`r${place.call}`) ?? this.calls.get(place.call) ?? this.root;
    }
    if (place.parent !== undefined) return this.steps.get(place.parent) ?? this.root;
    return this.root;
  }

  /** A new entry for node execution `step` under its place (a journal's node_end knows no `nodeKind`). */
  private node(place: Loose, step: number, label: string, start: number, nodeKind?: string): TreeEntry {
    const entry = this.add(this.parentOf(place), { id: `s${step}`, kind: 'node', label, nodeKind, start });
    this.steps.set(step, entry);
    return entry;
  }

  /** A new tool call entry under its caller: a spawned agent's call, else the node execution. */
  private tool(e: Loose & { tool: string; args?: Record<string, unknown> }, start: number): TreeEntry {
    const owner =
      (e.parentCall !== undefined ? this.calls.get(e.parentCall) : undefined) ??
      (e.step !== undefined ? this.steps.get(e.step) : undefined);
    const id = e.call !== undefined ? `c${e.call}` : `t${this.calls.size}`;
    const entry = this.add(owner ?? this.root, { id, kind: 'tool', label: e.tool, start });
    if (this.keep && e.args) entry.args = e.args;
    if (e.call !== undefined) this.calls.set(e.call, entry);
    return entry;
  }

  private add(
    parent: TreeEntry,
    fields: Pick<TreeEntry, 'id' | 'kind' | 'label' | 'start'> & Partial<TreeEntry>,
  ): TreeEntry {
    const entry: TreeEntry = { status: 'running', depth: parent.depth + 1, children: [], ...fields };
    parent.children.push(entry);
    return entry;
  }

  private end(entry: TreeEntry, ms: number, status: TreeStatus): void {
    entry.ms = ms;
    entry.status = status;
  }

  /**
   * The running model call of a node (or a spawned agent's call): a retry makes it appear before it
   * ends; a call without retries appears when it ends.
   */
  private liveModel(step: number, call: number | undefined, model: string, start: number): TreeEntry {
    const owner =
      (call !== undefined ? this.calls.get(call) : undefined) ?? this.steps.get(step) ?? this.root;
    const last = owner.children[owner.children.length - 1];
    if (last?.kind === 'model' && last.status === 'running') return last;
    return this.add(owner, { id: `m${this.models + 1}-live`, kind: 'model', label: model, start });
  }
}

/** Calls `visit` on `entry` and every entry below it, depth first, in order. */
export function walkTree(entry: TreeEntry, visit: (e: TreeEntry, depth: number) => void, depth = 0): void {
  visit(entry, depth);
  for (const c of entry.children) walkTree(c, visit, depth + 1);
}
