import { z } from 'zod';
import { json, readStored, storedResult, waitStored } from '../durable.js';
import { heldRun, RUN_ID, unknownRun } from './common.js';
import { defineGenericTool } from './define.js';

/** Default time hatchery_result waits, in seconds: well under the ~60 s many clients allow a call. */
export const DEFAULT_RESULT_WAIT_S = 30;
/** Longest wait hatchery_result gives; a longer one asked for is cut to it. */
export const MAX_RESULT_WAIT_S = 300;

/** hatchery_result: waits a while for a run, then gives its result or says it is still going. */
export const hatcheryResult = defineGenericTool({
  name: 'hatchery_result',
  description: `Wait up to wait_seconds (default ${DEFAULT_RESULT_WAIT_S}) for a run started with hatchery_start, then return its result, or "still running" with its status; call again to keep waiting. Keep wait_seconds below your client's tool-call timeout.`,
  annotations: { title: 'Run result', readOnlyHint: true, openWorldHint: false },
  schema: z.object({
    run_id: RUN_ID,
    // The maximum is advertised, not enforced: a longer wait asked for is cut to it.
    wait_seconds: z
      .number()
      .min(0)
      .meta({ maximum: MAX_RESULT_WAIT_S })
      .optional()
      .describe(
        `Seconds to wait for the run to finish (0 to ${MAX_RESULT_WAIT_S}, default ${DEFAULT_RESULT_WAIT_S})`,
      ),
  }),
  async run({ run_id, wait_seconds }, { core, signal }) {
    const ms = Math.min(wait_seconds ?? DEFAULT_RESULT_WAIT_S, MAX_RESULT_WAIT_S) * 1000;
    const run = heldRun(core, run_id);
    if (!run) {
      if (!core.runtime.store) throw unknownRun(run_id);
      return storedResult(core, await waitStored(core, run_id, ms, signal));
    }
    const finished = await core.runs.wait(run, ms, signal);
    if (finished && run.result) {
      // A large output's resource may have expired since: the journal still has the output.
      const gone = run.result.content.some(
        (b) => b.type === 'resource_link' && core.outputs.owns(b.uri) && !core.outputs.has(b.uri),
      );
      if (gone && core.runtime.store) return storedResult(core, await readStored(core, run.id));
      return run.result;
    }
    return json(core.runs.status(run), 'still running: call hatchery_result again to keep waiting');
  },
});
