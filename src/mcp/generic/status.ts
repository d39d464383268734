import { z } from 'zod';
import { json, readStored, storedStatus } from '../durable.js';
import { heldRun, RUN_ID, unknownRun } from './common.js';
import { defineGenericTool } from './define.js';

/** hatchery_status: where a run is, from this server's memory or from the journal. */
export const hatcheryStatus = defineGenericTool({
  name: 'hatchery_status',
  description:
    'State of a run started with hatchery_start (or any run of the journal): queued, running, succeeded, failed, cancelled, input_required (with the question) or interrupted (the server stopped); the node running now, steps done, tokens and cost, and the outputs of the nodes that finished.',
  annotations: { title: 'Run status', readOnlyHint: true, openWorldHint: false },
  schema: z.object({ run_id: RUN_ID }),
  async run({ run_id }, { core }) {
    const run = heldRun(core, run_id);
    if (run) return json(core.runs.status(run));
    if (!core.runtime.store) throw unknownRun(run_id);
    return json(storedStatus(await readStored(core, run_id)));
  },
});
