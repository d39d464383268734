import type { Tool } from '@modelcontextprotocol/server';
import type { Runtime } from '../runtime/runtime.js';
import type { CallHost } from './calls.js';
import type { OutputStore } from './outputs.js';
import type { HatcheryRegistry } from './registry.js';
import type { RunRegistry } from './runs.js';

/**
 * What a client session and the generic tools use of the server that holds them. The server
 * implements it; sessions depend on this interface, so the server is the only module that knows both.
 */
export interface ServerHost extends CallHost {
  readonly registry: HatcheryRegistry;
  readonly runs: RunRegistry;
  /** Whether the tasks extension is offered (it needs the run journal: a task is a durable run). */
  readonly tasks: boolean;
  /** How long a tools/call waits for its run before answering with a task instead, in ms. */
  readonly taskWaitMs: number;
  /** Removes secrets from text shown to clients. */
  readonly redact: (text: string) => string;
  /** Full outputs of results cut to the size limit, served as resources. */
  readonly outputs: OutputStore;
  /**
   * Longest time a hatchery tool call is answered in before its run is handed off (ms); undefined
   * when calls wait for their run (--sync-wait 0, or no generic tools to poll with).
   */
  readonly syncWaitMs: number | undefined;
  /** Whether hatchery_runs lists every run of the served files to every session (--list-all-runs). */
  readonly listAllRuns: boolean;
  /** Whether the generic tools (hatchery_list, hatchery_start...) are offered. */
  readonly genericTools: boolean;
  readonly version: string;
  /** Aborted when the server shuts down. */
  readonly signal: AbortSignal;
  /** The hatchery tools, as listed to clients. */
  tools(): Tool[];
  /** The instructions sent to clients at initialization. */
  instructions(): string;
  /**
   * Resolves once the runtime is built and the loader's compiling half imported (a deferred start
   * does both after the first tools/list answer); what reads `runtime` or compiles awaits it.
   */
  ready(): Promise<void>;
}

/** A prepared attempt of a journaled run (Runtime.prepareResume), run later in the background. */
export type ResumeAttempt = Awaited<ReturnType<Runtime['prepareResume']>>;
