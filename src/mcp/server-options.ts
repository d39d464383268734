import type { Runtime, RuntimeOptions } from '../runtime/runtime.js';
import type { McpServerDef } from '../schema/hatchery.js';
import type { OutboundLimits } from './outbound.js';
import type { OutputStoreOptions } from './outputs.js';
import type { RunRegistryOptions } from './runs.js';

/**
 * Default longest time a hatchery tool call is answered in, in milliseconds: under the 60 s most
 * clients give a call. A run still going then is handed off: the call returns its run id.
 */
export const DEFAULT_SYNC_WAIT_MS = 50_000;

/** Options of the hatchery MCP server; the outbound limits (maxResultBytes...) cap what it sends. */
export interface HatcheryServerOptions extends OutboundLimits {
  /** Folder of hatchery files, searched recursively. */
  dir: string;
  /** A runtime to use; by default one is built from `runtimeOptions` (and closed with the server). */
  runtime?: Runtime;
  /** Options of the runtime built when `runtime` is not given. */
  runtimeOptions?: RuntimeOptions;
  /**
   * Opens the run journal (and the durable engine of a Postgres store) of the runtime built when
   * `runtime` is not given, in place of `runtimeOptions.store`: called when the runtime is built (after
   * the first answer of a deferred start), so its modules are not imported before.
   */
  openStore?: () => Promise<Pick<RuntimeOptions, 'store' | 'engine'>>;
  /** MCP servers from --mcp-config, for mcp: tool references of the files. */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
  /** Offer hatchery_list/run/start/status/result/cancel (default true). */
  genericTools?: boolean;
  /** Runs executing at once; further calls wait (default unlimited). */
  maxConcurrent?: number;
  /**
   * Answer the first tools/list before compiling the files (default false; `serve` sets it): each
   * file is listed once parsed and validated, and compiled and analysed on its first use or in the
   * background after that answer. A file that fails then is withdrawn (list_changed) and its error
   * logged; a call to it gets that error. Files broken at parse or schema level are never listed.
   */
  deferLoad?: boolean;
  /** Watch the folder and reload changed files (default true). */
  watch?: boolean;
  /** Quiet time after a file event before reloading, in milliseconds (default 100, at least 60). */
  debounceMs?: number;
  /** Interval of heartbeat progress notifications, in milliseconds (default 5000). */
  heartbeatMs?: number;
  /**
   * Longest time a hatchery tool call is answered in, in milliseconds (default 50 000, under the
   * common 60 s client timeout); a run still going is handed off and the call returns its run id.
   * 0 waits for every run to end. Needs the generic tools (hatchery_result) to be useful.
   */
  syncWaitMs?: number;
  /** How many finished background runs are kept, and for how long. */
  runs?: RunRegistryOptions;
  /** Offer the tasks extension (io.modelcontextprotocol/tasks) to 2026-era clients (default true). */
  tasks?: boolean;
  /**
   * How long a tools/call from a client that declares the tasks extension waits for its run before
   * answering with a task, in milliseconds (default 10 000; 0: always a task).
   */
  taskWaitMs?: number;
  /** Writes one log line (default: stderr, never stdout). */
  log?: (line: string) => void;
  /** Secrets besides the environment's API keys that must never appear in logs or results. */
  secrets?: readonly string[];
  /** How long, how many and how many bytes of such outputs are kept (default one hour, 20, 256 MiB). */
  outputs?: OutputStoreOptions;
  /**
   * Resume the background runs of served hatcheries that a stop of the server interrupted (they are
   * marked `interrupted` in the journal at start either way).
   */
  resumeInterrupted?: boolean;
  /**
   * hatchery_runs lists every run of the served files to every session (default false: only the runs
   * the asking session started). Status, result, respond and cancel take any known id either way.
   */
  listAllRuns?: boolean;
}

/** Default wait of a tools/call before it becomes a task (tasks extension), in ms. */
export const DEFAULT_TASK_WAIT_MS = 10_000;

/** Log levels used by the server (MCP logging levels). */
export type LogLevel = 'debug' | 'info' | 'warning' | 'error';
