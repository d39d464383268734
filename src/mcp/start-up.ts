import { readFile } from 'node:fs/promises';
import { formatError } from '../core/errors.js';
import type { Runtime, RuntimeOptions } from '../runtime/runtime.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { A2A_SOURCE } from './a2a/source.js';
import { TASK_SOURCE } from './ext-tasks/schemas.js';
import type { ServerHost } from './host.js';
import type { RegistryChange } from './registry.js';
import { servesRun } from './run-access.js';
import type { HatcheryServerOptions, LogLevel } from './server-options.js';
import { HatcheryWatcher } from './watcher.js';

// The server's start-up: the runtime a deferred start builds after its first answer and the runs a
// stop interrupted, recovered from the journal (HatcheryMcpServer.ready); the folder's watcher.

/** What logs the server's start-up: the server's log (stderr and every client). */
interface Logger {
  log(level: LogLevel, message: string): void;
}

/** Whether runs of this source are resumed by --resume-interrupted: background runs, MCP and A2A tasks. */
function resumable(source: string): boolean {
  return source === 'background' || source === TASK_SOURCE || source === A2A_SOURCE;
}

/**
 * Marks the journal's runs whose process is gone as interrupted, and resumes the interrupted
 * background runs and tasks of served files (those just claimed and those an earlier stop left
 * interrupted) when the server was started with resumeInterrupted. A journal that
 * cannot be read is a warning: serving goes on.
 */
export async function recoverRuns(host: ServerHost & Logger, resumeInterrupted: boolean): Promise<void> {
  const store = host.runtime.store;
  // A durable engine recovers runs itself: this replica's own at its start, dead replicas' by claim.
  if (!store || host.runtime.engine) return;
  let claimed: Awaited<ReturnType<typeof store.claimInterrupted>>;
  try {
    // A run of a file this server does not serve is not its business: left as it is, not named.
    claimed = await store.claimInterrupted((run) => servesRun(host, run));
  } catch (err) {
    host.log('warning', `run journal ${store.location}: ${formatError(err)}`);
    return;
  }
  if (resumeInterrupted) {
    // Runs a stop already left interrupted (a graceful shutdown, or an earlier server without the
    // flag that claimed them) are resumed too: that is what background runs and tasks are for.
    try {
      const claimedIds = new Set(claimed.map((r) => r.id));
      const earlier = await store.list({ status: 'interrupted', limit: Number.POSITIVE_INFINITY });
      for (const r of earlier) {
        const background = resumable(r.source);
        if (background && !claimedIds.has(r.id) && servesRun(host, r)) claimed.push(r);
      }
    } catch (err) {
      host.log('warning', `run journal ${store.location}: ${formatError(err)}`);
    }
  }
  for (const run of claimed) {
    const background = resumable(run.source);
    const resume = resumeInterrupted && background;
    const at = run.node ? ` at node "${run.node}"` : '';
    host.log(
      'info',
      `run ${run.id} of ${run.hatchery} was interrupted${at}; ${resume ? 'resuming it' : 'hatchery_resume (or hatchery-mcp runs resume) continues it'}`,
    );
    if (!resume) continue;
    try {
      const { resumeRun } = await import('./background.js');
      const attempt = await host.runtime.prepareResume(run.id);
      const r = resumeRun(host, run.id, attempt, run);
      r.note = `interrupted${at} when the server stopped, and resumed when it started again (--resume-interrupted); the nodes that had finished were taken from the run journal`;
    } catch (err) {
      host.log('warning', `run ${run.id} of ${run.hatchery} cannot be resumed: ${formatError(err)}`);
    }
  }
}

/**
 * Builds the runtime a server owns (its module imported now, not at start), with the run journal
 * that `openStore` opens in place of `runtimeOptions.store`.
 */
export async function ownRuntime(options: HatcheryServerOptions): Promise<Runtime> {
  const [{ Runtime }, opened] = await Promise.all([import('../runtime/runtime.js'), options.openStore?.()]);
  const runtimeOptions = opened?.store ? { ...options.runtimeOptions, ...opened } : options.runtimeOptions;
  return new Runtime(withMcpServers(runtimeOptions, options.mcpServers));
}

/** Runtime options whose tool layer also knows the server's --mcp-config servers. */
function withMcpServers(
  options: RuntimeOptions | undefined,
  mcpServers: Readonly<Record<string, McpServerDef>> | undefined,
): RuntimeOptions | undefined {
  if (!mcpServers || options?.tools?.mcpServers) return options;
  return { ...options, tools: { ...options?.tools, mcpServers } };
}

/**
 * The watcher of a server's folder, reloading through the server, and `begin`, which starts it:
 * chokidar's scan, then what changed between the load (`since`) and the scan is queued (CatchUp).
 */
export function folderWatcher(
  server: Pick<ServerHost, 'registry'> & Logger & { reload(paths: string[]): Promise<RegistryChange> },
  since: number,
  debounceMs: number | undefined,
): { watcher: HatcheryWatcher; begin: () => void } {
  const registry = server.registry;
  const watcher = new HatcheryWatcher(registry.dir, {
    debounceMs,
    onChange: async (paths) => {
      await server.reload(paths);
    },
    onError: (err) => server.log('warning', `file watcher: ${err.message}`),
  });
  const begin = () => {
    watcher
      .start({
        since,
        known: () => [...registry.loadedFiles(), ...registry.dependencies()],
        list: () => registry.listFiles(),
        unchanged: async (file) => {
          const text = registry.loadedText(file);
          return text !== undefined && (await readFile(file, 'utf8').catch(() => undefined)) === text;
        },
      })
      .catch((err: unknown) => server.log('warning', `file watcher: ${formatError(err)}`));
  };
  return { watcher, begin };
}
