import { randomUUID } from 'node:crypto';
import { linkedController } from '../core/cancel.js';
import type { Hatchery, RunListener, RunState } from '../engine/contracts.js';
import { endOf, runMeta } from './journal/run-meta.js';
import type { RunStore } from './journal/store.js';
import type { RunOptions, RunResult } from './options.js';

/**
 * A run with a journal: created (or the reopened one of options.journal), fed every event, ended
 * with the run's status; a cancel through the store aborts it. The final write is not awaited
 * here (the store's read, reopen and close wait for it), so the journal never delays the result.
 */
export async function runJournaled(
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
  const runId = options.runId ?? options.journal?.id ?? randomUUID();
  const t0 = performance.now();
  const journal = options.journal ?? store.create(runMeta(h, runId, options));
  const own = journal.listener;
  const user = options.onEvent;
  const listener: RunListener = user
    ? (e) => {
        own(e);
        user(e);
      }
    : own;
  const { controller, unlink } = linkedController(options.signal);
  running.set(runId, controller);
  const hold: { shared?: RunState } = {};
  try {
    const result = await runWith(runId, listener, controller.signal, hold);
    void journal.end('succeeded', {
      output: result.output,
      value: result.value,
      usage: result.usage,
      steps: result.steps,
      ms: Math.round(performance.now() - t0),
    });
    return result;
  } catch (err) {
    const [status, fields] = endOf(err, controller.signal, performance.now() - t0);
    if (hold.shared) {
      fields.usage = hold.shared.usage;
      fields.steps = hold.shared.steps;
    }
    void journal.end(status, fields);
    throw err;
  } finally {
    running.delete(runId);
    unlink();
  }
}
