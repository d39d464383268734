/** Runs resumed in the background: a suspended task answered by tasks/update, hatchery_resume and the rest. */

import { LinkedController } from '../core/cancel.js';
import type { Provider } from '../providers/types.js';
import { failed, succeeded } from './calls.js';
import type { ResumeAttempt, ServerHost } from './host.js';
import type { BackgroundRun } from './runs.js';

/**
 * Resumes a journaled run in the background under its own id (hatchery_resume, hatchery_respond,
 * tasks/update, --resume-interrupted): finished nodes come from the journal, the rest runs with
 * `sampling`; `meta.source` keeps a task a task.
 */
export function resumeRun(
  core: ServerHost,
  id: string,
  attempt: ResumeAttempt,
  meta: { hatchery: string; file: string; source?: string; startedAt?: number },
  sampling: Provider | undefined,
): BackgroundRun {
  const controller = new LinkedController(core.signal);
  const unlink = (): void => controller.unlink();
  const structured = () => core.registry.get(meta.hatchery)?.tool.outputSchema !== undefined;
  const run = core.runs.start(
    meta,
    controller,
    async (signal, onEvent) => {
      core.runStarted();
      try {
        const result = await attempt({ signal, onEvent, sampling });
        return succeeded(core, result, structured());
      } catch (err) {
        return failed(core, err, signal, structured());
      } finally {
        core.runEnded();
      }
    },
    id,
  );
  run.note = 'resumed; the nodes that had finished were taken from the run journal';
  run.done.then(unlink, unlink);
  return run;
}
