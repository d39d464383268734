import type { z } from 'zod';
import { askSchema } from './ask.js';
import { banelingAliases, banelingSchema } from './baneling.js';
import { droneAliases, droneSchema } from './drone.js';
import { loopSchema } from './loop.js';
import { mapSchema } from './map.js';
import { parallelSchema } from './parallel.js';
import { scriptSchema } from './script.js';

/** The node kinds a file can use; `types` are the accepted spellings of `type`. */
export const NODE_KINDS = {
  drone: { types: ['ai', 'drone'], schema: droneSchema, aliases: droneAliases as Record<string, string> },
  baneling: {
    types: ['tool', 'baneling'],
    schema: banelingSchema,
    aliases: banelingAliases as Record<string, string>,
  },
  script: { types: ['script'], schema: scriptSchema, aliases: {} as Record<string, string> },
  parallel: { types: ['parallel'], schema: parallelSchema, aliases: {} as Record<string, string> },
  map: { types: ['map'], schema: mapSchema, aliases: {} as Record<string, string> },
  loop: { types: ['loop'], schema: loopSchema, aliases: {} as Record<string, string> },
  ask: { types: ['ask'], schema: askSchema, aliases: {} as Record<string, string> },
} satisfies Record<string, { types: string[]; schema: z.ZodObject; aliases: Record<string, string> }>;

/** One of the node kinds. */
export type NodeKind = keyof typeof NODE_KINDS;

/** Every accepted `type` value mapped to its kind. */
export const TYPE_TO_KIND: ReadonlyMap<string, NodeKind> = new Map(
  (Object.entries(NODE_KINDS) as [NodeKind, (typeof NODE_KINDS)[NodeKind]][]).flatMap(([kind, k]) =>
    k.types.map((t) => [t, kind] as const),
  ),
);
