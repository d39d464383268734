import { z } from 'zod';
import { nodeBase, nodeRef, template } from './common.js';
import { nodeKind } from './kind.js';
import { fileObject, lazily } from './object.js';
import { onErrorField } from './parallel.js';

/** A map node: runs one node chain once per item of a list. */
export const mapSchema = lazily(() =>
  fileObject({
    ...nodeBase,
    type: z.literal('map').describe('"map": run a node chain once per item, several at a time'),
    items: template(
      'The list: a JSON array (objects stay objects in ctx.item), otherwise one item per non-empty line',
    ),
    node: nodeRef.describe(
      'Node that starts the chain run for each item; it sees {{ ctx.item }} and {{ ctx.index }} (0-based)',
    ),
    concurrency: z.number().int().min(1).optional().describe('How many items run at once (default 4)'),
    on_error: onErrorField,
  }),
);

/** A map node as written in a file. */
export type MapDef = z.infer<ReturnType<typeof mapSchema>>;

/** The map kind: its `node` starts a chain run once per item. */
export const mapKind = nodeKind({
  types: ['map'],
  schema: mapSchema,
  children: [{ field: 'node', how: 'map' }],
});
