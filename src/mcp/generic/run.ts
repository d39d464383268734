import { TARGET, target } from './common.js';
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
