import { json } from '../durable.js';
import { TARGET, target, WAIT_FOR_IT } from './common.js';
import { defineGenericTool } from './define.js';

/** hatchery_run: runs a hatchery by name, for files added after the client fetched its tool list. */
export const hatcheryRun = defineGenericTool({
  name: 'hatchery_run',
  description:
    'Run a hatchery by name and return its final output. Works for hatcheries added after your tool list was fetched. Named inputs go in "inputs" as name/value pairs.',
  annotations: { title: 'Run a hatchery', openWorldHint: true },
  schema: TARGET,
  run(args, ctx) {
    const t = target(ctx.core, args);
    return ctx.call(t.entry, t.args);
  },
});

/** hatchery_start: a run in the background, for runs that may outlast a client's call timeout. */
export const hatcheryStart = defineGenericTool({
  name: 'hatchery_start',
  description:
    'Start a hatchery run in the background and return its run id at once. For runs that may outlast your tool-call timeout: then call hatchery_result with the run id until it returns the result.',
  annotations: { title: 'Start a hatchery run', openWorldHint: true },
  schema: TARGET,
  async run(args, ctx) {
    const t = target(ctx.core, args);
    const run = await ctx.start(t.entry, t.args);
    return json({ run_id: run.id, hatchery: run.hatchery, state: run.state }, WAIT_FOR_IT);
  },
});
