import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { HatcheryError } from '../../core/errors.js';
import type { Tool, ToolContext } from '../../engine/contracts.js';
import type { A2aAgentDef } from '../../schema/hatchery.js';
import { didYouMean, listNames } from '../../schema/suggest.js';
import { guardedFetch } from '../builtin/guarded-fetch.js';
import type { NetPolicy } from '../builtin/net-guard.js';
import { envHeaders } from '../env-headers.js';
import type { A2aRefWithDef } from './agent-def.js';
import { callRemote } from './call.js';
import { messageIdFor } from './message-id.js';

/** How long a fetched card is used before it is fetched again. */
export const CARD_TTL_MS = 5 * 60_000;
/** Time the fetch of a card may take: it is shared by every call waiting for the agent. */
const CARD_TIMEOUT_MS = 30_000;

/** A connected agent: its card and a client speaking the protocol version the card offers. */
export interface Agent {
  card: AgentCard;
  client: Client;
  /** `A2A agent "echo"` or `A2A agent at <url>`. */
  who: string;
  fetchedAt: number;
}

/** Where the card of an agent URL is: the URL itself when it names a .json file, else its well-known path. */
export function cardUrl(url: string): URL {
  const u = new URL(url);
  u.hash = '';
  if (u.pathname.endsWith('.json')) return u;
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return new URL('.well-known/agent-card.json', u);
}

/** A name a model accepts for a tool (letters, digits, _ and -, at most 64). */
function toolName(text: string): string {
  const name = text.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  return (name || 'agent').slice(0, 64);
}

/** The arguments of every skill tool: one message. */
export const INPUT_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string', description: 'The message sent to the agent' } },
  required: ['message'],
  additionalProperties: false,
} as const;

/**
 * The remote agents runs use, shared by all runs of a Runtime: cards are fetched on first use and
 * again after CARD_TTL_MS, every request through the network guard. Made on the first a2a: tool, so
 * runs without one never load the A2A SDK.
 */
export class A2aAgents {
  private readonly agents = new Map<string, Promise<Agent>>();

  constructor(private readonly policy: NetPolicy) {}

  /** The agent at `def`, connected (its card fetched) when not known or when its card is old. */
  async connect(def: A2aAgentDef, who: string): Promise<Agent> {
    const key = `${def.url}\u0000${JSON.stringify(def.headers ?? {})}`;
    const known = this.agents.get(key);
    if (known) {
      const agent = await known.catch(() => undefined);
      if (agent && Date.now() - agent.fetchedAt < CARD_TTL_MS) return agent;
      if (this.agents.get(key) !== known) return this.connect(def, who);
    }
    const fresh = this.open(def, who);
    this.agents.set(key, fresh);
    // A failed fetch is not kept: the next call tries again.
    fresh.catch(() => {
      if (this.agents.get(key) === fresh) this.agents.delete(key);
    });
    return fresh;
  }

  /** Fetches the card (v1.0 or v0.3) and makes a client for the interface it offers. */
  private async open(def: A2aAgentDef, who: string): Promise<Agent> {
    const url = cardUrl(def.url);
    const headers = def.headers
      ? envHeaders(who, def.headers, 'the "headers" of its a2aAgents entry', { agent: def.url })
      : undefined;
    const fetchImpl = guardedFetch(this.policy, { who, headers, origin: url.origin });
    const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } =
      await import('@a2a-js/sdk/client');
    const legacyCompat = { enabled: true };
    const resolver = new DefaultAgentCardResolver({
      fetchImpl: (input, init) => fetchImpl(input, { ...init, signal: AbortSignal.timeout(CARD_TIMEOUT_MS) }),
      legacyCompat,
    });
    let card: AgentCard;
    try {
      card = await resolver.resolve(url.origin, url.pathname.slice(1) + url.search);
    } catch (err) {
      if (err instanceof HatcheryError) throw err;
      throw new HatcheryError(
        'TOOL',
        `${who}: could not fetch its agent card at ${url.href}: ${(err as Error).message}; check the URL (the agent's base URL, or its card's own URL ending in .json) and that the agent is running`,
        { agent: def.url },
        { cause: err },
      );
    }
    const factory = new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
        new RestTransportFactory({ fetchImpl, legacyCompat }),
      ],
    });
    let client: Client;
    try {
      client = await factory.createFromAgentCard(card);
    } catch (err) {
      throw new HatcheryError(
        'TOOL',
        `${who}: its card offers no interface this client speaks (JSON-RPC or HTTP+JSON, A2A 1.0 or 0.3): ${(err as Error).message}`,
        { agent: def.url },
        { cause: err },
      );
    }
    // A 1.0 card written as ProtoJSON leaves out an empty list, and the SDK passes such a card on
    // as it came when it has no security scheme to tell it apart.
    return { card: { ...card, skills: card.skills ?? [] }, client, who, fetchedAt: Date.now() };
  }

  /** The tools of a reference: one per skill of the agent's card, or the one skill it names. */
  async tools(ref: A2aRefWithDef, def: A2aAgentDef, who: string): Promise<Tool[]> {
    const agent = await this.connect(def, who);
    const skills = agent.card.skills;
    if (ref.skill !== undefined) return [this.skillTool(ref, def, agent, pickSkill(agent, ref.skill))];
    if (skills.length === 0) return [this.skillTool(ref, def, agent, undefined)];
    return skills.map((s) => this.skillTool(ref, def, agent, s));
  }

  /** One skill of the agent as a tool taking a message. */
  private skillTool(ref: A2aRefWithDef, def: A2aAgentDef, agent: Agent, skill: AgentSkill | undefined): Tool {
    const card = agent.card;
    const about = skill?.description || card.description || `the agent's skill ${skill?.id}`;
    const who = skill ? `${agent.who} (skill "${skill.id}")` : agent.who;
    return {
      name: toolName(skill?.id || skill?.name || card.name),
      description: `${about} (remote A2A agent "${card.name}")`,
      inputSchema: INPUT_SCHEMA,
      ref: ref.ref,
      timeoutMs: def.timeout_ms,
      call: async (args: Record<string, unknown>, tc: ToolContext) => {
        const text = args.message;
        if (typeof text !== 'string' || text === '')
          throw new HatcheryError('TOOL', `${who}: the "message" argument must be a non-empty string`);
        const messageId = messageIdFor(tc, ref.ref, args);
        // A resumed run whose journal holds this call takes its result: the agent is not asked twice.
        const held = tc.scope.shared.memo?.call(messageId);
        if (held) return held;
        // The card may have changed since the tool was made: the client follows it.
        const now = await this.connect(def, agent.who);
        const res = await callRemote({
          client: now.client,
          who,
          streaming: now.card.capabilities?.streaming === true,
          messageId,
          text,
          skill: skill?.id,
          signal: tc.signal,
        });
        return { ...res, key: messageId };
      },
    };
  }
}

/** The skill a reference names, by id (or, failing that, by name). */
export function pickSkill(agent: Pick<Agent, 'card' | 'who'>, id: string): AgentSkill {
  const skills = agent.card.skills;
  const skill = skills.find((s) => s.id === id) ?? skills.find((s) => s.name === id);
  if (skill) return skill;
  const ids = skills.map((s) => s.id);
  throw new HatcheryError(
    'UNKNOWN_TOOL',
    `${agent.who} has no skill "${id}"${didYouMean(id, ids)}; its skills: ${listNames(ids) || 'none'}`,
  );
}
