/**
 * The runs behind tasks: a hatchery call started in the background under a journaled run id, and a
 * suspended task's run resumed with the answer tasks/update brought.
 */
import { linkedController } from '../../core/cancel.js';
import type { RunListener } from '../../engine/contracts.js';
import type { Provider } from '../../providers/types.js';
import { failed, runHatcheryCall, succeeded } from '../calls.js';
import type { ResumeAttempt, ServerHost } from '../host.js';
import type { RegistryEntry } from '../registry.js';
import type { BackgroundRun } from '../runs.js';
import { TASK_SOURCE } from './schemas.js';

/**
 * Starts a call of `entry` as a task's run: in the background, cancelled only by tasks/cancel (or
 * hatchery_cancel) and shutdown. `onStart` fires once the run has its journal, i.e. once a tasks/get
 * from any server on the same store would find it.
 */
export function startTaskRun(
  core: ServerHost,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  onStart: () => void,
): BackgroundRun {
  const h = entry.hatchery;
  const { controller, unlink } = linkedController(core.signal);
  const run = core.runs.start(
    { hatchery: h.name, file: h.file, source: TASK_SOURCE },
    controller,
    (signal, onEvent, runId) => {
      const listener: RunListener = (e) => {
        onEvent(e);
        if (e.type === 'run_start' && e.depth === 0) onStart();
      };
      // No elicitation and no sampling: nobody is on the line once the call has become a task, so an
      // ask node suspends the run (input_required) and tasks/update answers it.
      return runHatcheryCall(core, entry, args, { signal, onEvent: listener, runId, source: TASK_SOURCE });
    },
  );
  run.done.then(unlink, unlink);
  return run;
}

/**
 * Resumes a journaled run in the background under its own id (hatchery_resume, hatchery_respond,
 * tasks/update, --resume-interrupted): finished nodes come from the journal, the rest runs with
 * `sampling`; `meta.source` keeps a task a task.
 */
export function resumeRun(
  core: ServerHost,
  id: string,
  attempt: ResumeAttempt,
  meta: { hatchery: string; file: string; source?: string },
  sampling: Provider | undefined,
): BackgroundRun {
  const { controller, unlink } = linkedController(core.signal);
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
