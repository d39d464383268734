import type { z } from 'zod';
import { askSchema } from './ask.js';
import { banelingAliases, banelingSchema } from './baneling.js';
import { droneAliases, droneSchema } from './drone.js';
import { loopSchema } from './loop.js';
import { mapSchema } from './map.js';
import { parallelSchema } from './parallel.js';
import { scriptSchema } from './script.js';

/** A node kind's entry: its schema is built on first use (a file of drones never builds the others). */
function kind<S extends z.ZodObject>(types: string[], schema: () => S, aliases: Record<string, string> = {}) {
  return {
    types,
    get schema(): S {
      return schema();
    },
    aliases,
  };
}

/** The node kinds a file can use; `types` are the accepted spellings of `type`. */
export const NODE_KINDS = {
  drone: kind(['ai', 'drone'], droneSchema, droneAliases as Record<string, string>),
  baneling: kind(['tool', 'baneling'], banelingSchema, banelingAliases as Record<string, string>),
  script: kind(['script'], scriptSchema),
  parallel: kind(['parallel'], parallelSchema),
  map: kind(['map'], mapSchema),
  loop: kind(['loop'], loopSchema),
  ask: kind(['ask'], askSchema),
} satisfies Record<string, { types: string[]; schema: z.ZodObject; aliases: Record<string, string> }>;

/** One of the node kinds. */
export type NodeKind = keyof typeof NODE_KINDS;

/** Every accepted `type` value mapped to its kind. */
export const TYPE_TO_KIND: ReadonlyMap<string, NodeKind> = new Map(
  (Object.entries(NODE_KINDS) as [NodeKind, (typeof NODE_KINDS)[NodeKind]][]).flatMap(([kind, k]) =>
    k.types.map((t) => [t, kind] as const),
  ),
);
