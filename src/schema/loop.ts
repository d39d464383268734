import { z } from 'zod';
import { nodeBase, nodeRef } from './common.js';
import { nodeKind } from './kind.js';
import { fileObject, lazily } from './object.js';

/** A loop node: repeats a node chain until a condition holds (refine until approved). */
export const loopSchema = lazily(() =>
  fileObject({
    ...nodeBase,
    type: z.literal('loop').describe('"loop": repeat a node chain until a condition holds'),
    body: nodeRef.describe(
      'Node that starts the body; the body runs along its next chain to the end once per iteration, in the same ctx, with {{ ctx.iteration }} (1-based)',
    ),
    until: z
      .string()
      .min(1)
      .describe(
        'When to stop: a word (or phrase) found as a whole word in the body output, case-sensitive as in next routing; or a Nunjucks template, rendered after each iteration, that stops the loop when it renders "true"',
      ),
    max_iterations: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Most iterations (default 10); reaching it without "until" goes to on_limit or fails the run',
      ),
    on_limit: nodeRef
      .optional()
      .describe('Node to go to when max_iterations (or max_visits) is reached (default: fail the run)'),
  }),
);

/** A loop node as written in a file. */
export type LoopDef = z.infer<ReturnType<typeof loopSchema>>;

/** The loop kind: its `body` chain runs again until `until` holds; on_limit is taken after the last iteration. */
export const loopKind = nodeKind({
  types: ['loop'],
  schema: loopSchema,
  children: [{ field: 'body', how: 'body' }],
  ownLimit: true,
});
