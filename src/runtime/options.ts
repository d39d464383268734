// The options of a Runtime and of one run, and what a run returns; runtime.ts re-exports them.
import type { CommandLineFile } from '../core/fs/write-policy.js';
import type { TraceContext } from '../core/trace.js';
import type { AskFn, DurableSteps, NodeMemo, RunListener } from '../engine/contracts.js';
import type { Budget } from '../engine/meter.js';
import type { RunJournal, RunStore } from '../journal/store.js';
import type { PriceTable } from '../providers/prices.js';
import type { ProviderFactory, Vendor } from '../providers/resolve.js';
import type { Provider, Usage } from '../providers/types.js';
import type { ToolResolverOptions } from '../tools/resolve.js';
import type { Cassette } from './cassette/cassette.js';

/** How a Runtime is set up; one Runtime serves many runs (a CLI call or a whole MCP server). */
export interface RuntimeOptions {
  /** Environment for API keys, base URLs and HATCHERY_MODEL (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Folders files may be read from and written to, besides each hatchery's own folder (--allow-root). */
  allowRoots?: readonly string[];
  /**
   * More write roots (--allow-write). One that is a protected folder, or inside one, lets runs write
   * there (hatchery files stay off limits).
   */
  allowWrite?: readonly string[];
  /** Served folders: runs never write in them (unless allowWrite opens them) nor create hatchery files there. */
  protectedDirs?: readonly string[];
  /** Files the process was started with (--mcp-config, --prices, ...): runs never write them. */
  protectedFiles?: readonly CommandLineFile[];
  /** The default write root (default process.cwd(); ignored when it is / or the home folder). */
  cwd?: string;
  /** Overrides the files' max_steps (the CLI's --max-steps). */
  maxSteps?: number;
  /** Overrides the files' max_depth. */
  maxDepth?: number;
  /** Fixed providers by vendor (tests, embedding); they need no API key. */
  providers?: Partial<Record<Vendor, Provider>>;
  /** Builds SDK-backed providers; default uses the openai and @anthropic-ai/sdk clients. */
  providerFactory?: ProviderFactory;
  /** Largest decoded model reply, in bytes (default 8 MiB, `--max-reply-bytes`); a longer one fails the call. */
  maxReplyBytes?: number;
  /**
   * Most characters a template may print in one render, build with `~` or read with fread (default
   * 8 Mi, `--max-render-chars`). Process-wide: the template engine is shared.
   */
  maxRenderChars?: number;
  /** Options of the tool layer (shell access, MCP servers, result limits). */
  tools?: ToolResolverOptions;
  /** Records every model and tool call of its runs, or answers them from a recording (run --record/--replay). */
  cassette?: Cassette;
  /**
   * Where runs are journaled (undefined: no journal, and no event is built for it). The store's
   * folder is never writable by runs; Runtime.close() closes the store.
   */
  store?: RunStore;
  /**
   * Runs each run as a workflow of a durable engine that checkpoints its steps (DBOS, with a Postgres
   * store): a run whose process dies is run again elsewhere without repeating its finished steps.
   */
  engine?: DurableEngine;
  /** Model prices by "vendor:model" overriding the file's and the built-in ones (--prices FILE). */
  prices?: PriceTable;
  /** Server-wide limits of every run (--budget-*); each limit is the smallest of this, the run's and the file's. */
  budget?: Budget;
}

/** A durable engine (runtime/durable): the workflow of each run, and who runs a recovered one. */
export interface DurableEngine {
  /**
   * Runs `body` as the workflow of attempt `attempt` of run `runId`, with its checkpointed steps; a
   * step ended by a stopping server (`signal` aborted by shutdownReason) is left to the replica that
   * takes the run over, not checkpointed.
   */
  start(
    runId: string,
    attempt: number,
    body: (steps: DurableSteps) => Promise<RunResult>,
    signal?: AbortSignal,
  ): Promise<RunResult>;
  /** Sets how a run the engine recovers (its process died) is run again: `recover` runs it with `steps`. */
  attach(recover: (runId: string, steps: DurableSteps) => Promise<unknown>): void;
  /**
   * Waits for one of the `limit.max` slots of `limit.queue`, shared by every replica, for run `runId`;
   * resolves with the function that frees it (call it once the run ended).
   */
  slot(limit: SlotLimit, runId: string, signal: AbortSignal): Promise<() => void>;
  /** Stops taking work; runs still going stay the engine's to recover. */
  close(): Promise<void>;
}

/** A limit on runs at once (--max-concurrent, a hatchery's max_concurrent). */
export interface SlotLimit {
  /** The queue counting its runs: one per limit. */
  queue: string;
  max: number;
  /** The limit as a user sets it, for messages: `--max-concurrent`, `max_concurrent of review`. */
  what: string;
}

/** Options of one run. */
export interface RunOptions {
  /** The run's input, `{{ ctx.input }}`. */
  input?: string;
  /** Values of declared inputs. */
  vars?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Receives run, node and tool events. */
  onEvent?: RunListener;
  /** Overrides max_steps for this run. */
  maxSteps?: number;
  /** The MCP client's model (sampling), when the run comes from such a client. */
  sampling?: Provider;
  /** The run's id (a UUID); default a fresh one. */
  runId?: string;
  /** Who starts the run, kept in its journal: `cli`, `mcp`, `background` (default `api`). */
  source?: string;
  /**
   * A journal already open for this run (resume: `store.reopen(runId)`), used instead of creating
   * one; pass `runId` with it. Ignored without a store.
   */
  journal?: RunJournal;
  /** Results of nodes that finished in an earlier attempt of this run (resume), served instead of running them. */
  memo?: NodeMemo;
  /** Asks a person (ask nodes, approvals); undefined: the run suspends with INPUT_REQUIRED. */
  ask?: AskFn;
  /** Limits of this run, besides the file's and the runtime's `budget` (the smallest of each wins). */
  budget?: Budget;
  /**
   * The OpenTelemetry trace context of the call that started the run (an MCP tools/call's
   * `_meta.traceparent` / `tracestate`): kept in the journal and sent as `_meta` on every tools/call
   * the run makes to MCP servers, nested runs and spawned agents included. A malformed one is dropped.
   */
  trace?: TraceContext;
  /**
   * The caller's id of the conversation the run belongs to (an A2A task's context id): kept in the
   * journal, so a task read back after a restart keeps the one its client knows.
   */
  conversation?: string;
  /** The run's steps on a durable engine, inside its workflow (set by the engine, never by callers). */
  durable?: DurableSteps;
  /** Which attempt of the run this is: 1, plus one per resume (a durable engine's workflow is one per attempt). */
  attempt?: number;
}

/** The outcome of a successful run. */
export interface RunResult {
  runId: string;
  output: string;
  /** Structured value of the final node (output_schema), if any. */
  value?: unknown;
  usage: Usage;
  steps: number;
  /** Latest output of every node that ran, by name, in the order of their first output. */
  outputs: Record<string, unknown>;
  /** `incomplete` when a write of the run's journal failed (a full disk): resume may lack records. */
  journal?: 'incomplete';
}
