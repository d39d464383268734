import { formatError, HatcheryError, isShutdown } from '../core/errors.js';
import type { TraceContext } from '../core/trace.js';
import type { Hatchery } from '../engine/contracts.js';
import { canonicalJson, sha16 } from './canonical.js';
import { processOwner } from './owner.js';
import type { RunMeta, RunStatus } from './store.js';

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

/** What of a run's options its first record keeps. */
export interface MetaOptions {
  input?: string;
  vars?: Readonly<Record<string, string>>;
  source?: string;
  /** The run's budget (its limits by name); any object of numbers. */
  budget?: object;
  /** The run's trace context, already checked (traceContext). */
  trace?: TraceContext;
  /** The caller's id of the conversation the run belongs to (an A2A task's context id). */
  conversation?: string;
}

/** The first record of a new run's journal: the hatchery, its hashes, the inputs, who started it. */
export function runMeta(h: Hatchery, id: string, options: MetaOptions): RunMeta {
  const { hash, nodes } = definitionHashes(h);
  const meta: RunMeta = {
    id,
    hatchery: h.name,
    file: h.file,
    hash,
    nodes,
    source: options.source ?? 'api',
    startedAt: Date.now(),
    owner: processOwner,
  };
  if (options.input !== undefined) meta.input = options.input;
  if (options.vars !== undefined) meta.vars = { ...options.vars };
  if (options.budget !== undefined) meta.budget = { ...options.budget } as Record<string, number>;
  if (options.trace !== undefined) meta.trace = { ...options.trace };
  if (options.conversation !== undefined) meta.conversation = options.conversation;
  return meta;
}

/**
 * The status and final fields of a journaled run that failed with `err`: INPUT_REQUIRED suspends
 * it (with the question), a stopping server interrupts it, a cancellation (ABORTED, or its signal
 * fired) cancels it, anything else
 * fails it with the error's code; the node it failed at is kept.
 */
export function endOf(err: unknown, signal: AbortSignal, ms: number): [RunStatus, Record<string, unknown>] {
  const code = err instanceof HatcheryError ? (err.code as string) : 'INTERNAL';
  const context = err instanceof HatcheryError ? err.context : {};
  const fields: Record<string, unknown> = { error: formatError(err), code, ms: Math.round(ms) };
  if (typeof context.node === 'string') fields.node = context.node;
  if (code === 'INPUT_REQUIRED') {
    fields.question = context.question;
    return ['input_required', fields];
  }
  // A server that stops leaves its runs to be resumed; only a user's cancel is `cancelled`.
  if (signal.aborted && isShutdown(signal.reason)) return ['interrupted', fields];
  return [code === 'ABORTED' || signal.aborted ? 'cancelled' : 'failed', fields];
}
