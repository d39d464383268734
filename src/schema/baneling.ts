import { z } from 'zod';
import { approveField } from './ask.js';
import { nodeBase, timeoutMs } from './common.js';
import { nodeKind } from './kind.js';
import { BANELING_TYPES } from './names.js';
import { fileObject, lazily } from './object.js';

/** Spellings of baneling fields used by the original Hatchery. */
export const banelingAliases = { tool: 'tool_name' } as const;

/** A JSON value whose strings are templates at any depth. */
const templatedJson: z.ZodType<unknown> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(templatedJson),
    z.record(z.string(), templatedJson),
  ]),
);

/** A baneling: one static tool call. */
export const banelingSchema = lazily(() =>
  fileObject(
    {
      ...nodeBase,
      type: z.enum(BANELING_TYPES).describe('"tool": a static tool call'),
      tool_name: z.string().min(1).describe('The tool reference to call (see the drone "tools" field)'),
      tool_args: z
        .record(z.string(), templatedJson)
        .optional()
        .describe('Arguments of the call; every string inside, at any depth, is a template'),
      timeout_ms: timeoutMs.optional(),
      approve: approveField.optional(),
    },
    banelingAliases,
  ),
);

/** A baneling node as written in a file. */
export type BanelingDef = z.infer<ReturnType<typeof banelingSchema>>;

/** The baneling kind: every run calls its one tool, `tool_name`. */
export const banelingKind = nodeKind({
  types: BANELING_TYPES,
  schema: banelingSchema,
  aliases: banelingAliases,
  toolRefs: (def, take) => take(def.tool_name, 'tool_name', true),
});
