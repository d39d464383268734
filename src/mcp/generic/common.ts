import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import { quote } from '../../schema/suggest.js';
import type { ServerHost } from '../host.js';
import type { RegistryEntry } from '../registry.js';
import type { BackgroundRun } from '../runs.js';
import { INPUT_DESCRIPTION, unknownName } from '../tool-defs.js';

// Arguments and answers several generic tools share.

/** What to do after starting, resuming or answering a run. */
export const WAIT_FOR_IT = 'call hatchery_result with this run_id to wait for the result';

/**
 * The run `id` as this server holds it in memory, unless it may have gone on elsewhere since: a run
 * that stopped here waiting for an answer, or interrupted, is answered or resumed through any process
 * sharing the store, so its journal says where it is (undefined then).
 */
export function heldRun(core: ServerHost, id: string): BackgroundRun | undefined {
  const run = core.runs.get(id);
  const over = run?.state === 'input_required' || run?.state === 'interrupted';
  return over && run.endedAt !== undefined && core.runtime.store ? undefined : run;
}

/** The run id argument of the tools that act on a run. */
export const RUN_ID = z
  .string()
  .describe('The run id returned by hatchery_start (or listed by hatchery_runs)');

const PAIR_SHAPE = '{"name": "<input name>", "value": "<text>"}';

const PAIR = z.object(
  {
    name: z.string().describe('Name of a declared input (see hatchery_list)'),
    value: z.string().describe('Its value'),
  },
  { error: (issue) => `"inputs[${String(issue.path?.[1])}]" must be ${PAIR_SHAPE}` },
);

/** `{"topic": "owls"}`, the shape of `inputs` before strict schemas, as name/value pairs. */
function pairsOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.entries(value).map(([name, v]) => ({ name, value: v }));
}

/**
 * The arguments of hatchery_run and hatchery_start: extra keys are the hatchery's own arguments.
 * Named inputs go as name/value pairs: a free-form object has no strict JSON Schema, and OpenAI's
 * strict tool mode refuses the whole tool for it; the object form clients sent before still works.
 */
export const TARGET = z
  .object({
    name: z.string().describe('Name of the hatchery (see hatchery_list)'),
    input: z.string().optional().describe(INPUT_DESCRIPTION),
    inputs: z
      .preprocess(pairsOf, z.array(PAIR, { error: `"inputs" must be a list of ${PAIR_SHAPE} pairs` }))
      .optional()
      .describe(
        'Values of the named inputs the hatchery declares (see hatchery_list), e.g. [{"name": "topic", "value": "owls"}]',
      ),
  })
  .loose();

/** The hatchery `args` name, and its arguments with `input`, `inputs` and extra keys flattened. */
export function target(
  core: ServerHost,
  args: z.infer<typeof TARGET>,
): { entry: RegistryEntry; args: Record<string, unknown> } {
  const entry = core.registry.get(args.name);
  if (!entry) {
    const names = core.registry.entries().map((e) => e.name);
    throw new HatcheryError(
      'NOT_FOUND',
      unknownName('hatchery', args.name, names, ' (hatchery_list shows them all)'),
    );
  }
  // No prototype: a "__proto__" input stays a key (refused as unknown) instead of a prototype.
  const flat: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(args)) if (k !== 'name' && k !== 'inputs') flat[k] = v;
  for (const pair of args.inputs ?? []) {
    if (Object.hasOwn(flat, pair.name))
      throw new HatcheryError('USAGE', `"inputs" gives ${quote(pair.name)} twice; give each input once`);
    flat[pair.name] = pair.value;
  }
  return { entry, args: flat };
}

/** The error for a run id that neither this server nor its journal knows. */
export function unknownRun(id: string): HatcheryError {
  return new HatcheryError(
    'NOT_FOUND',
    `unknown run id ${quote(id)}: no run of this server has it (it never existed, or it finished too long ago and was dropped); use the run_id that hatchery_start returned`,
  );
}
