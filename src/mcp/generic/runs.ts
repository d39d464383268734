import { z } from 'zod';
import { RUN_STATUSES, type RunStatus } from '../../journal/store.js';
import { listRuns } from '../durable.js';
import { defineGenericTool } from './define.js';

/** hatchery_runs: the recent runs a session may see, newest first, filtered. */
export const hatcheryRuns = defineGenericTool({
  name: 'hatchery_runs',
  description:
    'List recent runs from the run journal that this session started (every run of the served files when the server lists all runs), newest first: id, hatchery, state, steps, tokens and cost. Filter by state (e.g. "interrupted", "input_required") or hatchery name.',
  annotations: { title: 'List runs', readOnlyHint: true, openWorldHint: false },
  schema: z.object({
    status: z
      .enum(RUN_STATUSES as readonly [RunStatus, ...RunStatus[]])
      .optional()
      .describe('Only runs in this state'),
    hatchery: z.string().optional().describe('Only runs of this hatchery'),
    limit: z.int().min(1).max(500).optional().describe('Most runs listed (default 50)'),
  }),
  run(args, { core, mine }) {
    return listRuns(core, args, mine);
  },
});
