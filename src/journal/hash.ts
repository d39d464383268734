import type { Hatchery } from '../engine/contracts.js';
import { canonicalJson, sha16 } from './canonical.js';

/** The definition hash of a hatchery and of each of its nodes, as a run's first record keeps them. */
export interface DefinitionHashes {
  /** 16 hex digits of the SHA-256 of the whole definition's canonical JSON. */
  hash: string;
  /** The same for each node's definition, by node name. */
  nodes: Record<string, string>;
}

const cache = new WeakMap<Hatchery, DefinitionHashes>();

/**
 * The hashes of a loaded hatchery, computed once per loaded version (a Hatchery object is immutable
 * and a reload makes a new one), so a run never hashes its definition again.
 */
export function definitionHashes(h: Hatchery): DefinitionHashes {
  let hashes = cache.get(h);
  if (!hashes) {
    const nodes: Record<string, string> = {};
    const defs = (h.def as { nodes?: readonly { name?: unknown }[] }).nodes ?? [];
    for (const n of defs) if (typeof n.name === 'string') nodes[n.name] = sha16(canonicalJson(n));
    // Frozen: every run's first record holds this same object, and the journal keeps its cleaned copy.
    hashes = { hash: sha16(canonicalJson(h.def)), nodes: Object.freeze(nodes) };
    cache.set(h, hashes);
  }
  return hashes;
}
