import type { NodeKindImpl } from '../engine/contracts.js';
import type { NodeKind } from '../schema/nodes.js';
import { askImpl } from './ask.js';
import { banelingImpl } from './baneling.js';
import { droneImpl } from './drone.js';
import { loopImpl } from './loop.js';
import { mapImpl } from './map.js';
import { parallelImpl } from './parallel.js';
import { scriptImpl } from './script.js';

/** The implementation of each node kind. */
export const NODE_IMPLS: Record<NodeKind, NodeKindImpl<never>> = {
  drone: droneImpl as NodeKindImpl<never>,
  baneling: banelingImpl as NodeKindImpl<never>,
  script: scriptImpl as NodeKindImpl<never>,
  parallel: parallelImpl as NodeKindImpl<never>,
  map: mapImpl as NodeKindImpl<never>,
  loop: loopImpl as NodeKindImpl<never>,
  ask: askImpl as NodeKindImpl<never>,
};
