import { randomUUID } from 'node:crypto';
import { LinkedController } from '../core/cancel.js';
import { HatcheryError } from '../core/errors.js';
import type { Hatchery, RunListener, RunState } from '../engine/contracts.js';
import { endOf, runMeta } from '../journal/run-meta.js';
import type { RunJournal, RunMeta, RunStore } from '../journal/store.js';
import type { RunOptions, RunResult } from './options.js';

/**
 * A run with a journal: created (or the reopened one of options.journal), fed every event, ended
 * with the run's status; a cancel through the store aborts it. The result waits for the writes
 * under way when the run ends (so it can say the journal is incomplete), never for records to be
 * built; the final record is not awaited here (the store's read, reopen and close wait for it).
 * Not async: a `then` on the run instead of a frame of its own, per call of a server.
 */
export function runJournaled(
  store: RunStore,
  h: Hatchery,
  options: RunOptions,
  running: Map<string, AbortController>,
  runWith: (
    runId: string,
    listener: RunListener,
    signal: AbortSignal,
    hold: { shared?: RunState },
  ) => Promise<RunResult>,
): Promise<RunResult> {
  const t0 = performance.now();
  let runId: string;
  let journal: RunJournal;
  try {
    runId = options.runId ?? options.journal?.id ?? randomUUID();
    journal = options.journal ?? store.create(runMeta(h, runId, options));
  } catch (err) {
    return Promise.reject(err);
  }
  const own = journal.listener;
  const user = options.onEvent;
  const both: RunListener = user
    ? (e) => {
        own(e);
        user(e);
      }
    : own;
  // A run a durable engine runs again reports only what this execution does.
  const listener = options.durable?.listen ? options.durable.listen(both) : both;
  // Its own controller, which a cancel through the store aborts, following the caller's signal.
  const controller = new LinkedController(options.signal);
  running.set(runId, controller);
  const done = () => {
    running.delete(runId);
    controller.unlink();
  };
  const hold: { shared?: RunState } = {};
  let run: Promise<RunResult>;
  try {
    run = runWith(runId, listener, controller.signal, hold);
  } catch (err) {
    run = Promise.reject(err);
  }
  return run.then(
    (result) => {
      done();
      // The result waits for the writes under way (it builds no record): whether they failed is part
      // of it. The last record is queued at once, so it goes out in the same write as the run's last
      // events.
      const written = journal.written();
      void journal.end('succeeded', {
        output: result.output,
        value: result.value,
        usage: result.usage,
        steps: result.steps,
        ms: Math.round(performance.now() - t0),
      });
      return written.then(() => {
        if (journal.error !== undefined) result.journal = 'incomplete';
        return result;
      });
    },
    (err: unknown) => {
      done();
      const [status, fields] = endOf(err, controller.signal, performance.now() - t0);
      if (hold.shared) {
        fields.usage = hold.shared.usage;
        fields.steps = hold.shared.steps;
      }
      // A durable engine's run that a stopping server ends goes on in another replica (or this one
      // restarted): its journal stays open, the run `running`, its owner gone.
      if (status === 'interrupted' && options.durable !== undefined) void journal.flush();
      else void journal.end(status, fields);
      throw err;
    },
  );
}

/**
 * Refuses (RESUME_REFUSED) a run a durable engine recovered that this process may not run with its
 * rights (see Runtime.recoverable): it stays interrupted, for `runs resume` or a server of its file.
 */
export async function checkRecoverable(
  store: RunStore,
  id: string,
  recoverable: ((run: RunMeta) => boolean) | undefined,
): Promise<void> {
  const run = await store.read(id);
  if (run === undefined || recoverable?.(run.meta) === true) return;
  throw new HatcheryError(
    'RESUME_REFUSED',
    `run ${id} of ${run.meta.file} is not a run of a file this process serves, so it does not run it with its rights; it stays interrupted: resume it with hatchery-mcp runs resume ${id}, or on a server that serves the file`,
    { run: id },
  );
}
