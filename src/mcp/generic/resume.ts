import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import { json, readStored } from '../durable.js';
import { RUN_ID, WAIT_FOR_IT } from './common.js';
import { defineGenericTool, type GenericCallContext } from './define.js';

/**
 * Resumes a journaled run in the background, as this session's (hatchery_resume, hatchery_respond);
 * `tool` names the caller in errors, `note` is kept on the run for its status.
 */
async function resumeStored(
  tool: string,
  id: string,
  options: { from?: string; force?: boolean; answer?: string },
  ctx: GenericCallContext,
  note?: string,
): Promise<CallToolResult> {
  const { core } = ctx;
  if (!core.runtime.store)
    throw new HatcheryError(
      'USAGE',
      `${tool} needs the run journal, and this server runs without one (--no-journal)`,
    );
  const live = core.runs.get(id);
  if (live && live.endedAt === undefined)
    return json(core.runs.status(live), 'the run is still going: call hatchery_result to wait for it');
  // Checked now, so a wrong id or a changed file answers this call instead of a later poll.
  const stored = await readStored(core, id);
  const attempt = await core.runtime.prepareResume(id, options);
  // The source goes along: a task resumed here is still a task (tasks/get reads it live).
  const run = ctx.resume(id, attempt, stored.summary);
  if (note) run.note = note;
  return json({ run_id: run.id, hatchery: run.hatchery, state: run.state }, WAIT_FOR_IT);
}

/** hatchery_resume: goes on with a failed or interrupted run, finished nodes taken from its journal. */
export const hatcheryResume = defineGenericTool({
  name: 'hatchery_resume',
  description:
    'Resume a run that failed or was interrupted, in the background: nodes that finished are taken from its journal (no model or tool is called again for them) and the run goes on from the node it stopped at, or from "from". Then poll with hatchery_result.',
  annotations: { title: 'Resume a run', openWorldHint: true },
  schema: z.object({
    run_id: RUN_ID,
    from: z.string().optional().describe('Run again from this node on (default: where the run stopped)'),
    force: z.boolean().optional().describe('Resume although the hatchery file changed since the run started'),
  }),
  run({ run_id, from, force }, ctx) {
    return resumeStored('hatchery_resume', run_id, { from, force }, ctx);
  },
});

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
