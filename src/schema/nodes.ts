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
  drone: {
    types: ['ai', 'drone'],
    get schema() {
      return droneSchema();
    },
    aliases: droneAliases as Record<string, string>,
  },
  baneling: {
    types: ['tool', 'baneling'],
    get schema() {
      return banelingSchema();
    },
    aliases: banelingAliases as Record<string, string>,
  },
  script: {
    types: ['script'],
    get schema() {
      return scriptSchema();
    },
    aliases: {} as Record<string, string>,
  },
  parallel: {
    types: ['parallel'],
    get schema() {
      return parallelSchema();
    },
    aliases: {} as Record<string, string>,
  },
  map: {
    types: ['map'],
    get schema() {
      return mapSchema();
    },
    aliases: {} as Record<string, string>,
  },
  loop: {
    types: ['loop'],
    get schema() {
      return loopSchema();
    },
    aliases: {} as Record<string, string>,
  },
  ask: {
    types: ['ask'],
    get schema() {
      return askSchema();
    },
    aliases: {} as Record<string, string>,
  },
} satisfies Record<string, { types: string[]; schema: z.ZodObject; aliases: Record<string, string> }>;

/** One of the node kinds. */
export type NodeKind = keyof typeof NODE_KINDS;

/** Every accepted `type` value mapped to its kind. */
export const TYPE_TO_KIND: ReadonlyMap<string, NodeKind> = new Map(
  (Object.entries(NODE_KINDS) as [NodeKind, (typeof NODE_KINDS)[NodeKind]][]).flatMap(([kind, k]) =>
    k.types.map((t) => [t, kind] as const),
  ),
);
