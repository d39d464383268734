import { z } from 'zod';
import { askSchema } from './ask.js';
import { banelingSchema } from './baneling.js';
import { budgetSchema, pricesSchema } from './budget.js';
import { nodeRef } from './common.js';
import { droneSchema } from './drone.js';
import { loopSchema } from './loop.js';
import { mapSchema } from './map.js';
import { ENTRY_NAME, hatcheryAliases, IDENTIFIER, TOOL_NAME } from './names.js';
import { fileObject } from './object.js';
import { parallelSchema } from './parallel.js';
import { childEnvField, scriptSchema } from './script.js';

/** One MCP server, in the shape of Claude Desktop's `mcpServers` entries. */
const mcpServerSchema = z.union([
  fileObject({
    command: z.string().min(1).describe('Program to start (stdio transport), found on PATH or by its path'),
    args: z.array(z.string()).optional().describe('Arguments of the program, one per element (no shell)'),
    env: childEnvField
      .optional()
      .describe(
        `Environment variables of the server besides the allow-list (PATH, HOME, LANG, TMPDIR and the like; no other variable of this process reaches it); "\${NAME}" in a value is this process's NAME, e.g. {"GITHUB_TOKEN": "\${GITHUB_TOKEN}"}`,
      ),
    cwd: z
      .string()
      .optional()
      .describe(
        'Folder the server starts in. Default: the folder of the file that defines the server (this hatchery file, or the --mcp-config file); a relative path is taken from that folder. The folder must exist',
      ),
  }),
  fileObject({
    url: z.url().describe('Streamable HTTP endpoint'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        `HTTP headers sent with every request; "\${NAME}" in a value is this process's NAME (unset is an error), e.g. {"Authorization": "Bearer \${REMOTE_MCP_TOKEN}"}`,
      ),
  }),
]);

/** Map of server name to MCP server definition. */
export const mcpServersSchema = z.record(
  z.string().regex(ENTRY_NAME, 'a server name may contain only letters, digits, _, - and .'),
  mcpServerSchema,
);

/** One remote Agent2Agent agent: where its card is, and what every request to it carries. */
const a2aAgentSchema = fileObject({
  url: z
    .url({ protocol: /^https?$/ })
    .describe(
      "The agent's base URL (its card is at <url>/.well-known/agent-card.json) or its card's own URL (ending in .json)",
    ),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      `HTTP headers sent with every request to the agent's own host; "\${NAME}" in a value is this process's NAME (unset is an error), e.g. {"Authorization": "Bearer \${AGENT_TOKEN}"}`,
    ),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Time one call may take, from the message sent to the task's end (default: the tool timeout)"),
});

/** Map of agent name to remote A2A agent. */
export const a2aAgentsSchema = z.record(
  z.string().regex(ENTRY_NAME, 'an agent name may contain only letters, digits, _, - and .'),
  a2aAgentSchema,
);

const identifier = z.string().regex(IDENTIFIER, 'must be an identifier (letters, digits, _)');

/**
 * A node of any kind (used for the editor JSON Schema; loading validates each node by its `type`),
 * built on first use: loading builds only the kinds its files use.
 */
const anyNodeSchema = z.lazy(() =>
  z.union([
    droneSchema(),
    banelingSchema(),
    scriptSchema(),
    parallelSchema(),
    mapSchema(),
    loopSchema(),
    askSchema(),
  ]),
);

/** The whole hatchery file. */
export const hatcherySchema = fileObject(
  {
    name: z
      .string()
      .regex(TOOL_NAME, 'must be 1 to 64 letters, digits, _, - or . (it becomes the MCP tool name)')
      .describe('The name of the hatchery, also its MCP tool name'),
    desc: z.string().min(1).describe('What the hatchery does; the MCP tool description'),
    start: nodeRef.optional().describe('Entry node; default the first node'),
    inputs: z
      .record(identifier, z.string())
      .optional()
      .describe(
        'Declared inputs: variable name to the prompt/description shown when asking for it; available as {{ ctx.<name> }}',
      ),
    input_prompt: z
      .string()
      .min(1)
      .optional()
      .describe(
        "What the run's input ({{ ctx.input }}) is: asked on a terminal when no input is given, and the MCP tool's description of its input argument",
      ),
    files: z
      .record(identifier, z.string().min(1))
      .optional()
      .describe(
        'Variable name to file path (relative to this file), read for each run into {{ ctx.<name> }}',
      ),
    model: z.string().min(1).optional().describe('Default model of the drones'),
    client_fallback: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Model the drones use instead of the MCP client\'s (model sampling/client) when the run has no client that can sample, e.g. "openai:gpt-5.4-mini"; a drone\'s own client_fallback wins',
      ),
    max_steps: z.number().int().min(1).optional().describe('Maximum node executions per run (default 100)'),
    max_depth: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Maximum nesting of hatch:/node: runs (default 5)'),
    max_concurrent: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'At most this many runs of this hatchery at once when served (across all replicas of a Postgres store); further calls wait their turn',
      ),
    budget: budgetSchema
      .optional()
      .describe(
        'Limits of each run (tokens, cost_usd, tool_calls, model_calls, wall_ms); the run fails with BUDGET_EXHAUSTED when one is spent',
      ),
    prices: pricesSchema
      .optional()
      .describe(
        'Model prices ("vendor:model" to {input, output, cached_input} per million tokens) overriding the built-in table',
      ),
    cache: z
      .boolean()
      .optional()
      .describe("Prompt caching of Anthropic calls (default true); a drone's own `cache` wins"),
    mcpServers: mcpServersSchema
      .optional()
      .describe('MCP servers whose tools drones may use as mcp:<server>[/<tool>]'),
    a2aAgents: a2aAgentsSchema
      .optional()
      .describe('Remote Agent2Agent agents whose skills drones may use as a2a:<name>[#<skill>]'),
    output: z
      .string()
      .optional()
      .describe(
        'Template of the run\'s result, rendered when the run ends (e.g. "{{ out.Writer }}"); default: the output of the node where the run ended',
      ),
    nodes: z.array(anyNodeSchema).min(1).describe('The nodes of the graph'),
  },
  hatcheryAliases,
);

/** The top level validated before nodes are checked one by one against their own kind. */
export const hatcheryTopSchema = hatcherySchema.extend({
  nodes: z.array(z.unknown()).min(1).describe('The nodes of the graph'),
});

/** A hatchery file as written (after alias normalisation). */
export type HatcheryDef = z.infer<typeof hatcherySchema>;
/** One MCP server definition. */
export type McpServerDef = z.infer<typeof mcpServerSchema>;
/** One remote A2A agent definition. */
export type A2aAgentDef = z.infer<typeof a2aAgentSchema>;
