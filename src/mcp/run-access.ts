/**
 * Who may see which run. A run id is the capability to read, answer and cancel a run; a server
 * only ever knows runs of files it serves (a CLI run of another file sharing the state folder is
 * unknown to it), and hatchery_runs lists to a session only the runs that session started.
 */
import type { ServerHost } from './host.js';

/**
 * True when a journaled run is of a file this server serves now: the hatchery of that name is
 * loaded from exactly the file the run recorded. Every MCP path to a run read from the journal
 * checks this, and answers a run that fails it as an unknown id (its existence is not confirmed).
 */
export function servesRun(
  core: Pick<ServerHost, 'registry'>,
  run: { hatchery: string; file: string },
): boolean {
  const entry = core.registry.get(run.hatchery);
  return entry !== undefined && entry.file === run.file;
}

/** Most run ids a session remembers as its own; the oldest are forgotten first (a list shows at most 500). */
const MAX_SESSION_RUNS = 10_000;

/** The runs each session (its SDK server object) started, freed with the session. */
const bySession = new WeakMap<object, Set<string>>();

/** The ids of the runs `session` started (hatchery calls, hatchery_run/start/resume/respond, tasks). */
export function sessionRuns(session: object): ReadonlySet<string> {
  return bySession.get(session) ?? new Set();
}

/** Records that `session` started (or resumed) the run `id`. */
export function ownRun(session: object, id: string): void {
  let ids = bySession.get(session);
  if (!ids) {
    ids = new Set();
    bySession.set(session, ids);
  }
  ids.add(id);
  if (ids.size > MAX_SESSION_RUNS) ids.delete(ids.values().next().value!);
}
