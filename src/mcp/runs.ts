import type { CallToolResult } from '@modelcontextprotocol/server';
import { waitAtMost } from '../core/cancel.js';
import type { RunListener } from '../engine/contracts.js';
import type { RunStatus } from '../journal/store.js';
import { addUsage, type Usage } from '../providers/types.js';
import { internalError } from './results.js';

/**
 * Where a background run is: waiting for a slot, or in one of the journal's states (running,
 * finished one way or another, or stopped waiting for an answer (input_required) or by a server
 * restart (interrupted; the journal says so)).
 */
export type RunState = 'queued' | RunStatus;

/** How a background run ended: the tool result a direct call would have returned. */
export interface RunOutcome {
  state: 'succeeded' | 'failed' | 'cancelled' | 'input_required';
  result: CallToolResult;
  /** The question an input_required run waits on. */
  question?: unknown;
}

/** Executes a run in the background under the registry's id; must not throw (failures are outcomes). */
export type RunExecutor = (signal: AbortSignal, onEvent: RunListener, id: string) => Promise<RunOutcome>;

/** One run started with hatchery_start (or an MCP task). */
export interface BackgroundRun {
  readonly id: string;
  readonly hatchery: string;
  readonly file: string;
  /** Who started it, as its journal says (`background`, `task`); undefined for hatchery_start runs of old callers. */
  readonly source?: string;
  state: RunState;
  /** The node running now (nested runs as "sub > Node"). */
  node?: string;
  /** Nodes executed so far, nested runs included. */
  steps: number;
  /** Latest output of every top-level node that finished (its first 2,000 characters). */
  outputs: Record<string, string>;
  /** Tokens and cost so far (the run's total once it has ended, earlier attempts included). */
  usage?: Usage;
  /** What the earlier attempts of a resumed run spent (from its journal). */
  earlier?: Usage;
  /** The question the run waits on (state input_required). */
  question?: unknown;
  /** Why this run is a continuation (resumed after an interruption, or answered), shown by hatchery_status. */
  note?: string;
  readonly startedAt: number;
  /** When its state, node or steps last changed (ms since epoch). */
  updatedAt: number;
  endedAt?: number;
  result?: CallToolResult;
  readonly controller: AbortController;
  /** Resolves when the run has finished. */
  readonly done: Promise<void>;
  /** Resolves when the run starts running (its journal exists then) or, failing before that, ends. */
  readonly started: Promise<void>;
}

/** Options of the run registry. */
export interface RunRegistryOptions {
  /** Finished runs kept for late clients (oldest dropped first; default 100). */
  maxKept?: number;
  /** How long a finished run is kept, in milliseconds (default one hour). */
  maxAgeMs?: number;
}

/** Default number of finished runs kept. */
const DEFAULT_MAX_KEPT_RUNS = 100;
/** Default time a finished run is kept. */
const DEFAULT_RUN_MAX_AGE_MS = 3_600_000;

/** What a client can do next with a run in each state that is not final. */
export const NEXT_STEP: Partial<Record<string, string>> = {
  interrupted:
    'the server stopped while this run was going; call hatchery_resume with its run_id to continue from the node it was at (nodes that finished are not run again)',
  input_required: 'the run waits for an answer: call hatchery_respond with its run_id and your answer',
};

/** Largest output per node shown by hatchery_status. */
const STATUS_OUTPUT_LIMIT = 2_000;

/** A node's output as hatchery_status shows it: at most STATUS_OUTPUT_LIMIT characters, saying what was cut. */
export function statusOutput(text: string): string {
  const limit = STATUS_OUTPUT_LIMIT;
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/** Seconds between two times in ms, to a tenth, as statuses show durations. */
export function seconds(from: number, to: number): number {
  return Math.round((to - from) / 100) / 10;
}

/**
 * Background runs for the start-then-poll pattern: started at once, polled by id, kept for a while
 * after they end (bounded in count and age) so a client coming back late still gets its result.
 */
export class RunRegistry {
  private readonly runs = new Map<string, BackgroundRun>();
  private readonly maxKept: number;
  private readonly maxAgeMs: number;
  /** When prune last walked the runs, how many finished ones it kept, and how many ended since. */
  private prunedAt = 0;
  private keptAtPrune = 0;
  private endedSincePrune = 0;

  constructor(options: RunRegistryOptions = {}) {
    this.maxKept = options.maxKept ?? DEFAULT_MAX_KEPT_RUNS;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_RUN_MAX_AGE_MS;
  }

  /**
   * Starts a run; `controller` cancels it (link it to the server's shutdown signal). `id` continues
   * a run the journal knows (resume): its finished entry here, if any, is replaced.
   */
  start(
    meta: { hatchery: string; file: string; source?: string; startedAt?: number },
    controller: AbortController,
    execute: RunExecutor,
    // The global Web Crypto, loaded on first use (node:crypto would be loaded at serve's start).
    id: string = crypto.randomUUID(),
  ): BackgroundRun {
    this.prune();
    let finish!: () => void;
    const done = new Promise<void>((r) => {
      finish = r;
    });
    let begin!: () => void;
    const started = new Promise<void>((r) => {
      begin = r;
    });
    const run: BackgroundRun = {
      id,
      hatchery: meta.hatchery,
      file: meta.file,
      ...(meta.source !== undefined ? { source: meta.source } : {}),
      state: 'queued',
      steps: 0,
      outputs: {},
      // A resumed run keeps its first start: a task's createdAt must not change between polls.
      startedAt: this.runs.get(id)?.startedAt ?? meta.startedAt ?? Date.now(),
      updatedAt: Date.now(),
      controller,
      done,
      started,
    };
    // A resumed run is the newest again.
    this.runs.delete(id);
    this.runs.set(id, run);
    const onEvent: RunListener = (e) => {
      switch (e.type) {
        case 'run_start':
          if (run.state === 'queued') {
            run.state = 'running';
            begin();
          }
          run.updatedAt = Date.now();
          break;
        case 'node_start':
          run.node = e.depth > 0 ? `${e.hatchery} > ${e.node}` : e.node;
          run.updatedAt = Date.now();
          break;
        case 'node_end':
          run.updatedAt = Date.now();
          run.steps = Math.max(run.steps, e.step);
          // Capped when kept: a finished run stays in memory for an hour.
          if (e.depth === 0) run.outputs[e.node] = statusOutput(e.output);
          if (e.usage) {
            run.usage ??= { inputTokens: 0, outputTokens: 0 };
            addUsage(run.usage, e.usage);
          }
          break;
        case 'run_end':
          if (e.depth === 0) {
            // A resumed run's total: what its earlier attempts spent, and this one.
            const total = run.earlier ? { ...run.earlier } : { inputTokens: 0, outputTokens: 0 };
            addUsage(total, e.usage);
            run.usage = total;
          }
          break;
      }
    };
    execute(controller.signal, onEvent, id)
      .then(
        (outcome) => {
          run.state = outcome.state;
          run.result = outcome.result;
          if (outcome.question !== undefined) run.question = outcome.question;
        },
        (err) => {
          run.state = 'failed';
          run.result = internalError(String(err));
        },
      )
      .finally(() => {
        this.endedSincePrune++;
        run.endedAt = Date.now();
        run.updatedAt = run.endedAt;
        run.node = undefined;
        begin();
        finish();
      });
    return run;
  }

  /** The run with this id, if it is still kept. */
  get(id: string): BackgroundRun | undefined {
    this.prune();
    return this.runs.get(id);
  }

  /** Drops a run nobody will ask about (a call answered before its handoff). */
  forget(id: string): void {
    this.runs.delete(id);
  }

  /** Every run kept, newest first. */
  all(): BackgroundRun[] {
    this.prune();
    return [...this.runs.values()].reverse();
  }

  /** Waits until the run ends or `ms` pass (or the signal fires); true when it has ended. */
  async wait(run: BackgroundRun, ms: number, signal?: AbortSignal): Promise<boolean> {
    if (run.endedAt !== undefined) return true;
    await waitAtMost(run.done, ms, signal);
    return run.endedAt !== undefined;
  }

  /** Cancels every run that has not finished, and waits up to `ms` for them to end. */
  async cancelAll(reason: unknown, ms: number): Promise<void> {
    const active = [...this.runs.values()].filter((r) => r.endedAt === undefined);
    for (const r of active) r.controller.abort(reason);
    if (active.length > 0) await waitAtMost(Promise.all(active.map((r) => r.done)), ms);
  }

  /** A JSON-friendly view of a run for hatchery_status. */
  status(run: BackgroundRun): Record<string, unknown> {
    return {
      run_id: run.id,
      hatchery: run.hatchery,
      state: run.state,
      ...(run.node ? { current_node: run.node } : {}),
      steps: run.steps,
      seconds: seconds(run.startedAt, run.endedAt ?? Date.now()),
      ...usageFields(run.usage),
      ...(run.note ? { note: run.note } : {}),
      ...(run.state === 'input_required'
        ? { question: run.question, next_step: NEXT_STEP.input_required }
        : {}),
      outputs: { ...run.outputs },
    };
  }

  /**
   * Drops finished runs that are too old, then the oldest finished ones beyond the count limit.
   * Every call start, poll and list prunes: the walk over every run happens only when the count may be
   * over its limit or a second (at most the age limit) has passed, else 1,000 calls in flight would
   * each walk the 1,000 others.
   */
  private prune(): void {
    const now = Date.now();
    if (
      this.keptAtPrune + this.endedSincePrune <= this.maxKept &&
      now - this.prunedAt < Math.min(1000, this.maxAgeMs)
    )
      return;
    this.prunedAt = now;
    this.endedSincePrune = 0;
    const finished: BackgroundRun[] = [];
    for (const r of this.runs.values()) {
      if (r.endedAt === undefined) continue;
      if (now - r.endedAt > this.maxAgeMs) this.runs.delete(r.id);
      else finished.push(r);
    }
    if (finished.length > this.maxKept) {
      finished.sort((a, b) => a.endedAt! - b.endedAt!);
      for (const r of finished.slice(0, finished.length - this.maxKept)) this.runs.delete(r.id);
    }
    this.keptAtPrune = Math.min(finished.length, this.maxKept);
  }
}

/** A usage in the snake_case fields results and statuses show (the MCP `_meta` of a call holds the same). */
export function usageJson(usage: Usage): Record<string, number> {
  const f: Record<string, number> = {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cached_input_tokens: usage.cachedInputTokens ?? 0,
  };
  if (usage.costUsd !== undefined) f.cost_usd = usage.costUsd;
  return f;
}

/** Tokens and cost as status fields; none before any model call. */
export function usageFields(usage: Usage | undefined): Record<string, number> {
  if (!usage || (usage.inputTokens === 0 && usage.outputTokens === 0)) return {};
  return usageJson(usage);
}
