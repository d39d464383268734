import { createHash } from 'node:crypto';
import type { ToolContext } from '../../engine/contracts.js';
import { canonicalJson } from '../../journal/canonical.js';

/** Per run: how many times each (place, call) key was sent, so a repeated call gets its own id. */
const SENT: object = Object.freeze({ a2aCallsSent: true });

/**
 * The message id of a remote call, derived from where it is made: the run, the node execution (its
 * scope path and sequence number, the same in every attempt of the run), the agent, the arguments,
 * and how many equal calls this node execution made before. A resumed run that makes the call again
 * gets the same id: the journal keeps it as the call's key, so a call it holds is answered from there
 * and not sent again; an agent that remembers message ids can tell a repeat. UUID-shaped, as agents
 * expect.
 */
export function messageIdFor(tc: ToolContext, ref: string, args: Record<string, unknown>): string {
  const scope = tc.scope;
  const shared = scope.shared;
  // Nested runs and spawned agents have no path of their own: they run again whole inside the node
  // that holds them, so their place within it is their hatchery and depth.
  const place = scope.path ?? `~${scope.hatchery.name}@${scope.depth}`;
  const key = `${place}\u0000${scope.seq}\u0000${tc.node}\u0000${ref}\u0000${canonicalJson(args)}`;
  shared.toolMemo ??= new Map();
  let sent = shared.toolMemo.get(SENT) as Map<string, number> | undefined;
  if (!sent) {
    sent = new Map();
    shared.toolMemo.set(SENT, sent);
  }
  const n = sent.get(key) ?? 0;
  sent.set(key, n + 1);
  const hex = createHash('sha256').update(`${shared.runId}\u0000${key}\u0000${n}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
