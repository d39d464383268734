/** Runs resumed in the background: a suspended task answered by tasks/update, hatchery_resume and the rest. */

import { LinkedController } from '../core/cancel.js';
import type { RunListener } from '../engine/contracts.js';
import type { Provider, Usage } from '../providers/types.js';
import { combine, failed, succeeded } from './calls.js';
import type { ResumeAttempt, ServerHost } from './host.js';
import type { BackgroundRun } from './runs.js';

/**
 * Resumes a journaled run in the background under its own id (hatchery_resume, hatchery_respond,
 * tasks/update, --resume-interrupted): finished nodes come from the journal, the rest runs with
 * `sampling`; `meta.source` keeps a task a task; `listener` also hears the attempt's events (an A2A
 * task streams them to its client).
 */
export function resumeRun(
  core: ServerHost,
  id: string,
  attempt: ResumeAttempt,
  meta: { hatchery: string; file: string; source?: string; startedAt?: number; usage?: Usage },
  sampling?: Provider,
  listener?: RunListener,
): BackgroundRun {
  const controller = new LinkedController(core.signal);
  const structured = () => core.registry.get(meta.hatchery)?.tool.outputSchema !== undefined;
  const run = core.runs.start(
    meta,
    controller,
    async (signal, onEvent) => {
      core.runStarted();
      try {
        const result = await attempt({ signal, onEvent: combine(onEvent, listener), sampling });
        // The result says what the whole run cost, and each attempt: this one spent result.usage.
        const s = (await core.runtime.store?.read(id).catch(() => undefined))?.summary;
        const attempts = s?.attemptUsage ? { total: s.usage, each: s.attemptUsage } : undefined;
        return succeeded(core, result, structured(), attempts);
      } catch (err) {
        return failed(core, err, signal, structured());
      } finally {
        core.runEnded();
      }
    },
    id,
  );
  run.note = 'resumed; the nodes that had finished were taken from the run journal';
  // hatchery_status counts the whole run: what the earlier attempts spent, then this one's calls.
  if (meta.usage && (meta.usage.inputTokens > 0 || meta.usage.outputTokens > 0)) {
    run.earlier = { ...meta.usage };
    run.usage = { ...meta.usage };
  }
  // done never rejects: the run's failures are its outcome.
  run.done.then(() => controller.unlink());
  return run;
}
