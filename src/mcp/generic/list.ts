import path from 'node:path';
import { z } from 'zod';
import { json } from '../durable.js';
import { MAX_ERROR_BYTES } from '../outbound.js';
import { defineGenericTool } from './define.js';

/** hatchery_list: the hatcheries served now, for clients that keep the tool list they saw first. */
export const hatcheryList = defineGenericTool({
  name: 'hatchery_list',
  description:
    'List the hatcheries (workflows) loaded now: name, description and named inputs of each, plus files that failed to load. The list follows file changes even when your tool list does not.',
  annotations: { title: 'List hatcheries', readOnlyHint: true, openWorldHint: false },
  schema: z.object({}),
  run(_, { core }) {
    const hatcheries = core.registry.entries().map((e) => ({
      name: e.name,
      description: core.out.desc(e.hatchery.desc),
      inputs: { ...e.hatchery.inputs },
      file: path.relative(core.registry.dir, e.file),
    }));
    // One broken file must not fill the answer: each problem is capped like an error result.
    const problems = core.registry.problems().map((p) => core.out.text(p, MAX_ERROR_BYTES));
    return json({ hatcheries, ...(problems.length ? { problems } : {}) });
  },
});
