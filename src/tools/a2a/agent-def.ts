import type { ToolRef } from '../../engine/contracts.js';
import type { A2aAgentDef } from '../../schema/hatchery.js';

/** An a2a: reference with its agent, attached at load time for a named agent of the file. */
export type A2aRefWithDef = Extract<ToolRef, { kind: 'a2a' }> & { def?: A2aAgentDef };

/** True when an a2a: reference names its agent by URL rather than by an a2aAgents entry. */
export const isAgentUrl = (agent: string): boolean => /^https?:\/\//i.test(agent);

/**
 * The agent of a reference and how messages name it: the definition attached at load time, the
 * file's `a2aAgents` entry, or the URL itself; undefined for a name that is defined nowhere.
 */
export function agentFor(
  ref: A2aRefWithDef,
  fileAgents: Readonly<Record<string, A2aAgentDef>> | undefined,
): { def: A2aAgentDef; who: string } | undefined {
  const named =
    ref.def ?? (fileAgents && Object.hasOwn(fileAgents, ref.agent) ? fileAgents[ref.agent] : undefined);
  if (named) return { def: named, who: `A2A agent "${ref.agent}"` };
  if (isAgentUrl(ref.agent)) return { def: { url: ref.agent }, who: `A2A agent at ${ref.agent}` };
  return undefined;
}
