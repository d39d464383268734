import { z } from 'zod';
import { RUN_ID } from './common.js';
import { defineGenericTool } from './define.js';
import { resumeStored } from './resume.js';

/** hatchery_respond: answers the question a run waits on, and lets it go on in the background. */
export const hatcheryRespond = defineGenericTool({
  name: 'hatchery_respond',
  description:
    'Answer the question a run waits on (state input_required: an ask node, or an approval before a side effect); the run goes on in the background. Then poll with hatchery_result.',
  annotations: { title: 'Answer a run', openWorldHint: true },
  schema: z.object({
    run_id: RUN_ID,
    answer: z.string().describe('Your answer (one of the choices when the question lists them)'),
  }),
  run({ run_id, answer }, ctx) {
    const note =
      'answered with hatchery_respond; the nodes that had finished were taken from the run journal';
    return resumeStored('hatchery_respond', run_id, { answer }, ctx, note);
  },
});
