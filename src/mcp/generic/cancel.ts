import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import { json, readStored, summaryView } from '../durable.js';
import { RUN_ID, unknownRun } from './common.js';
import { defineGenericTool } from './define.js';

/** hatchery_cancel: stops a run of this server, or marks one nobody runs cancelled in the journal. */
export const hatcheryCancel = defineGenericTool({
  name: 'hatchery_cancel',
  description:
    'Cancel a run started with hatchery_start: its model calls, tool calls and scripts stop. A run waiting for an answer or interrupted is marked cancelled.',
  annotations: { title: 'Cancel a run', destructiveHint: false, openWorldHint: false },
  schema: z.object({ run_id: RUN_ID }),
  async run({ run_id }, { core }) {
    const run = core.runs.get(run_id);
    const store = core.runtime.store;
    // A suspended run is over in this process but not in its journal: it could still be answered.
    const waiting = run?.endedAt !== undefined && run.state === 'input_required';
    if (!run || (waiting && store)) {
      // A run elsewhere is asked to stop; one nobody runs (suspended, interrupted) ends here.
      if (!store) throw unknownRun(run_id);
      await readStored(core, run_id);
      const summary = await store.cancel(run_id);
      if (run && summary?.status === 'cancelled') run.state = 'cancelled';
      return json({ ...(summary ? summaryView(summary) : {}), note: 'cancel requested' });
    }
    if (run.endedAt !== undefined)
      return json({ ...core.runs.status(run), note: `already finished (${run.state})` });
    run.controller.abort(new HatcheryError('ABORTED', 'the run was cancelled with hatchery_cancel'));
    await core.runs.wait(run, 5_000);
    return json(core.runs.status(run));
  },
});
