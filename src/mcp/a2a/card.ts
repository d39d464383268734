/**
 * The agent cards: one for the folder (a skill per hatchery) and one per hatchery (its one skill),
 * built from the registry each time it changes, so hot reload changes them. Each declares its
 * JSON-RPC and HTTP+JSON endpoints at A2A 1.0 and, mirrored, at 0.3 for legacy clients.
 */
import path from 'node:path';
import { A2A_PROTOCOL_VERSION, AgentCard, type AgentSkill } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import type { ServerHost } from '../host.js';
import type { ListedEntry } from '../registry.js';

/** Where the A2A endpoints are: the folder's at A2A_PATH, a hatchery's at A2A_PATH/<name>. */
export const A2A_PATH = '/a2a';

/** Where the HTTP+JSON (REST) binding of an endpoint is, below its JSON-RPC path. */
export const REST_PATH = '/rest';

/** The media types of a message's parts: the input as text, named inputs as a JSON object. */
const INPUT_MODES = ['text/plain', 'application/json'];

/** The name of the security scheme of a server with a token. */
const BEARER = 'bearer';

/** The skill of one hatchery: its name, description, and what it takes and gives. */
function skillOf(core: ServerHost, e: ListedEntry): AgentSkill {
  const inputs = Object.keys((e.tool.inputSchema.properties ?? {}) as Record<string, unknown>).filter(
    (k) => k !== 'input',
  );
  const examples =
    inputs.length > 0
      ? [`a text part (the input) and a data part {${inputs.map((k) => `"${k}": "..."`).join(', ')}}`]
      : [];
  return {
    id: e.name,
    name: e.name,
    description: core.out.desc(e.tool.description ?? e.name),
    tags: ['hatchery'],
    examples,
    inputModes: INPUT_MODES,
    outputModes: e.tool.outputSchema ? ['text/plain', 'application/json'] : ['text/plain'],
    securityRequirements: [],
  };
}

/**
 * The agent card of `scope` (a hatchery's name; undefined for the folder), its endpoint under
 * `base` (the origin the request came to); `secured`: the server demands its bearer token. The
 * card is undefined for a scope that names no served hatchery. JSON-RPC is at the endpoint's path,
 * HTTP+JSON below it at REST_PATH.
 */
export function agentCard(
  core: ServerHost,
  scope: string | undefined,
  base: string,
  secured: boolean,
): AgentCard | undefined {
  const listed = core.registry.listed();
  const entries = scope === undefined ? listed : listed.filter((e) => e.name === scope);
  const one = scope === undefined ? undefined : entries[0];
  if (scope !== undefined && !one) return undefined;
  const url = `${base}${A2A_PATH}${one ? `/${encodeURIComponent(one.name)}` : ''}`;
  const folder = path.basename(core.registry.dir);
  const description = one
    ? core.out.desc(one.tool.description ?? one.name)
    : core.out.desc(
        `The hatcheries of the folder "${folder}", one skill each. Name the skill of a message in its metadata ({"skill": "<id>"}), or send it to ${A2A_PATH}/<id>; a folder with one hatchery needs no name. A text part is the input; a data part holds named inputs.`,
      );
  return {
    name: one ? one.name : `hatchery-mcp: ${folder}`,
    description,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
        {
          url: `${url}${REST_PATH}`,
          protocolBinding: 'HTTP+JSON',
          tenant: '',
          protocolVersion: A2A_PROTOCOL_VERSION,
        },
      ],
      ['JSONRPC', 'HTTP+JSON'],
    ),
    provider: undefined,
    version: core.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: secured
      ? {
          [BEARER]: {
            scheme: {
              $case: 'httpAuthSecurityScheme',
              value: {
                description: 'the token the server was started with (serve --token, or HATCHERY_MCP_TOKEN)',
                scheme: 'Bearer',
                bearerFormat: '',
              },
            },
          },
        }
      : {},
    securityRequirements: secured ? [{ schemes: { [BEARER]: { list: [] } } }] : [],
    defaultInputModes: INPUT_MODES,
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: entries.map((e) => skillOf(core, e)),
    signatures: [],
  };
}

/**
 * `card` as the SDK's card handler should write it. The handler writes the object it is given as it
 * is, and the SDK's objects hold a oneof (the security scheme) as {$case, value}; the protocol's JSON
 * of it is ProtoJSON ({"httpAuthSecurityScheme": {...}}), the one shape every client reads. The 0.3
 * card is built from the object's fields, so it is unchanged. ProtoJSON leaves out empty lists;
 * `skills` stays, as the card's schema requires it (a folder may serve no hatchery for a while).
 */
export function servedCard(card: AgentCard): AgentCard {
  const proto = AgentCard.toJSON(card) as { skills?: unknown[] };
  const json = { ...proto, skills: proto.skills ?? [] };
  return { ...card, toJSON: () => json } as AgentCard;
}
