/**
 * The run store: what the runtime, the CLI and the MCP server know of durable runs. The embedded
 * default keeps one JSON-lines file per run (file-store.ts); a database-backed store implements the
 * same interface without touching its callers.
 */
import type { TraceContext } from '../core/trace.js';
import type { RunListener } from '../engine/contracts.js';
import type { Usage } from '../providers/types.js';

/** Version of the journal's record format, written in every record as `v`. */
export const JOURNAL_VERSION = 1;

/** Every RunStatus, for checking a status given by a user or read from a file. */
export const RUN_STATUSES = [
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'interrupted',
  'input_required',
] as const;

/** Where a run stands, as its journal says. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Whether a cancel still changes a run in `status`: one running, interrupted or waiting for an answer. */
export function cancellable(status: RunStatus): boolean {
  return status === 'running' || status === 'interrupted' || status === 'input_required';
}

/** The process that owns a running run (a run whose owner is gone was interrupted). */
export interface RunOwner {
  pid: number;
  host: string;
  /** When the owner process started (ms since epoch): a reused pid is not the same owner. */
  since: number;
  /** The replica id of the process, in a database store shared by several processes. */
  replica?: string;
}

/** What a run's first record says about it. */
export interface RunMeta {
  id: string;
  hatchery: string;
  /** Absolute path of the hatchery file ('' for definitions built in memory). */
  file: string;
  /** Hash of the definition as loaded (16 hex digits); resume compares it. */
  hash: string;
  /** Hash of each node's definition, by node name; tells resume which nodes changed. */
  nodes: Record<string, string>;
  input?: string;
  vars?: Record<string, string>;
  /** Who started it: `cli`, `mcp` (a tool call), `background` (hatchery_start, a task). */
  source: string;
  /** Budget the run was started with (the merged file, CLI and server limits), if any. */
  budget?: Record<string, number>;
  /** The trace context the run was started with (a resume continues the same trace). */
  trace?: TraceContext;
  /** The caller's id of the conversation the run belongs to (an A2A task's context id). */
  conversation?: string;
  startedAt: number;
  owner: RunOwner;
}

/** A question a suspended run waits on (ask nodes, approvals). */
export interface PendingQuestion {
  node: string;
  kind: 'ask' | 'approve';
  question: string;
  choices?: readonly string[];
  schema?: Record<string, unknown>;
}

/** A run as `runs list`, hatchery_runs and hatchery_status show it. */
export interface RunSummary {
  id: string;
  hatchery: string;
  file: string;
  status: RunStatus;
  source: string;
  startedAt: number;
  endedAt?: number;
  /** Node executions recorded. */
  steps: number;
  usage: Usage;
  /** The node running now, or the node it failed, was interrupted or suspended at. */
  node?: string;
  output?: string;
  /** The error message, and its code, of a failed run. */
  error?: string;
  code?: string;
  question?: PendingQuestion;
  /** Attempts: 1, plus one per resume. */
  attempts: number;
  /** Tokens and cost of each attempt, in order, when there was more than one (`usage` is their sum). */
  attemptUsage?: Usage[];
  /** Lines of its journal that could not be read (a write cut short, a damaged file) and were skipped. */
  corruptLines?: number;
}

/** One journal line: versioned, timestamped; `type` says what the rest holds. */
export interface JournalRecord {
  v: number;
  /** Milliseconds since the epoch. */
  at: number;
  type: string;
  [field: string]: unknown;
}

/** A run read back: its meta, every record in order, and the summary they add up to. */
export interface StoredRun {
  meta: RunMeta;
  records: JournalRecord[];
  summary: RunSummary;
}

/** The journal of one run, open for appending. Appends are queued and never block the caller. */
export interface RunJournal {
  readonly id: string;
  /** Appends a run event (node, model and tool events of the run and of runs nested in it). */
  readonly listener: RunListener;
  /** Appends any other record (resumed, interrupted, input_required, cancelled...). */
  append(type: string, fields: Record<string, unknown>): void;
  /**
   * Appends the final record of an attempt, writes everything queued, and closes the journal; what it
   * returns settles once that is written.
   */
  end(status: RunStatus, fields: Record<string, unknown>): PromiseLike<void>;
  /** Writes everything queued so far. */
  flush(): Promise<void>;
  /**
   * Settles once the records already handed to storage are stored (it builds none of those still
   * queued): `error` then says whether any of them was lost.
   */
  written(): Promise<void>;
  /** Set once a write of this journal failed (a full disk): its records after that may be lost. */
  readonly error?: unknown;
}

/** Which runs to list. */
export interface RunFilter {
  status?: RunStatus;
  hatchery?: string;
  /** Only runs whose id starts with this (a shortened id); checked before any run is read. */
  idPrefix?: string;
  /** Newest first; default 50. */
  limit?: number;
  /** Told of each journal file that could not be read (too large, unreadable): it is left out, not fatal. */
  skipped?: (id: string, why: string) => void;
}

/** What every run store is given: how long it keeps runs, what it never writes, how often it looks for cancels. */
export interface RunStoreOptions {
  /** Finished runs kept at most (default 1000). */
  maxRuns?: number;
  /** Finished runs older than this many days are deleted (default 30). */
  maxAgeDays?: number;
  /** Environment whose secret values never reach a journal (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** More secret values to redact (a server token). */
  secrets?: readonly string[];
  /** How often the process running runs looks for cancels asked through other processes, in ms (default 500). */
  pollMs?: number;
}

/** Durable runs: create, append, read, list, claim interrupted ones, cancel, prune. */
export interface RunStore {
  /** Where the runs are kept (a folder, a database URL without credentials), for messages. */
  readonly location: string;
  /** How long a finished run is kept before pruning may delete it, in ms (undefined: no age limit). */
  readonly retentionMs?: number;
  /** Starts the journal of a new run; `meta` is its first record, not to be changed after. */
  create(meta: RunMeta): RunJournal;
  /**
   * Reopens the journal of an existing run to append an attempt (resume): appends a `resumed` record
   * (with `fields`, e.g. the node it resumes from) naming this process as its owner.
   */
  reopen(id: string, fields?: Record<string, unknown>): Promise<RunJournal>;
  /** A run with everything recorded, or undefined when the store does not have it. */
  read(id: string): Promise<StoredRun | undefined>;
  /** Runs, newest first. */
  list(filter?: RunFilter): Promise<RunSummary[]>;
  /**
   * Marks runs still `running` whose owner process is gone as `interrupted` and returns them; when
   * several processes claim at once, each run is returned to one of them only. With `only`, runs it
   * refuses are left as they are (a server claims only runs of the files it serves).
   */
  claimInterrupted(only?: (run: RunMeta) => boolean): Promise<RunSummary[]>;
  /**
   * Cancels a run: a run this or another live process owns is asked to stop (`onCancel` fires in
   * its owner); one nobody owns (interrupted, suspended) is ended as `cancelled` at once.
   */
  cancel(id: string): Promise<RunSummary | undefined>;
  /** Called in the owner process when a cancel of one of its running runs was asked for. */
  onCancel(listener: (id: string) => void): void;
  /** Deletes finished runs beyond the age and count limits; returns how many were deleted. */
  prune(): Promise<number>;
  /** Writes everything buffered and stops watching. */
  close(): Promise<void>;
  /** Adds secret values (the Runtime's environment's) that must never reach a journal. */
  addSecrets?(values: readonly string[]): void;
}
