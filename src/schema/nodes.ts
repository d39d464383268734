import { askKind } from './ask.js';
import { banelingKind } from './baneling.js';
import { droneKind } from './drone.js';
import type { NodeKindSpec } from './kind.js';
import { loopKind } from './loop.js';
import { mapKind } from './map.js';
import { parallelKind } from './parallel.js';
import { scriptKind } from './script.js';

/** The node kinds a file can use, each declared in its own file (see kind.ts). */
export const NODE_KINDS = {
  drone: droneKind,
  baneling: banelingKind,
  script: scriptKind,
  parallel: parallelKind,
  map: mapKind,
  loop: loopKind,
  ask: askKind,
} satisfies Record<string, NodeKindSpec>;

/** One of the node kinds. */
export type NodeKind = keyof typeof NODE_KINDS;

/** The kind of a node without `type`. */
export const DEFAULT_KIND: NodeKind = 'drone';

/** Every accepted `type` value mapped to its kind. */
export const TYPE_TO_KIND: ReadonlyMap<string, NodeKind> = new Map(
  (Object.entries(NODE_KINDS) as [NodeKind, NodeKindSpec][]).flatMap(([kind, k]) =>
    k.types.map((t) => [t, kind] as const),
  ),
);

/** The declaration of node kind `kind` (a compiled node's or a journal's kind string), if it is one. */
export function kindSpec(kind: string): NodeKindSpec | undefined {
  return Object.hasOwn(NODE_KINDS, kind) ? NODE_KINDS[kind as NodeKind] : undefined;
}
