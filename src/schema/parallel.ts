import { z } from 'zod';
import { nodeBase, nodeRef, template } from './common.js';
import { nodeKind } from './kind.js';
import { ON_ERROR } from './names.js';
import { fileObject, lazily } from './object.js';

/** What a fan-out does when one of its branches fails. */
export const onErrorField = z
  .enum(ON_ERROR)
  .optional()
  .describe(
    '"fail" (default): a failing branch fails the node and cancels the others; "continue": its output becomes "error: <message>" and the others go on',
  );

/** A parallel node: runs several node chains at once, then joins their outputs. */
export const parallelSchema = lazily(() =>
  fileObject({
    ...nodeBase,
    type: z.literal('parallel').describe('"parallel": run several branches concurrently, then join them'),
    branches: z
      .array(nodeRef)
      .min(1)
      .describe(
        'Nodes that start the branches; each runs along its own next chain to the end, all at once. The final output of each is also out.<branch>',
      ),
    join: template(
      'How the outputs are combined; sees `branches` (a list of { name, output }) besides ctx and out. Default: "## <branch>" and its output for each branch, separated by blank lines',
    ).optional(),
    on_error: onErrorField,
  }),
);

/** A parallel node as written in a file. */
export type ParallelDef = z.infer<ReturnType<typeof parallelSchema>>;

/** The parallel kind: each of its `branches` starts a chain of its own, all at once. */
export const parallelKind = nodeKind({
  types: ['parallel'],
  schema: parallelSchema,
  children: [{ field: 'branches', how: 'branch' }],
});
