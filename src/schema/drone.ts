import { z } from 'zod';
import { nodeBase, template, timeoutMs } from './common.js';
import { nodeKind } from './kind.js';
import { DRONE_TYPES, ROUTES } from './names.js';
import { fileObject, lazily } from './object.js';

/** Spellings of drone fields used by the original Hatchery and its documentation. */
export const droneAliases = {
  user_prompt: 'usr_prompt',
  user_message: 'usr_prompt',
  system_prompt: 'sys_prompt',
  system_message: 'sys_prompt',
  max_output_tokens: 'max_tokens',
  agent_reuse: 'conversation',
} as const;

/** A kind of helper agent a drone may spawn (see `spawn`). */
const spawnTemplateSchema = fileObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, _, - or .')
    .describe('Template name the model picks; "self" spawns a copy of the calling drone'),
  desc: z.string().min(1).describe('What agents of this template are good at; the model reads it to choose'),
  sys_prompt: template('System prompt of the spawned agent; sees {{ task }} besides ctx and out').optional(),
  model: z.string().min(1).optional().describe("Model of the spawned agent; default the calling drone's"),
  tools: z.array(z.string().min(1)).optional().describe('Tools of the spawned agent (tool references)'),
  allow_prompt_addition: z
    .boolean()
    .optional()
    .describe('Let the model append instructions to the system prompt (system_prompt_addition)'),
});

/** LLM-decided spawning of ephemeral helper agents. */
const spawnSchema = fileObject({
  templates: z.array(spawnTemplateSchema).min(1).describe('The agent templates the model may spawn'),
  max_depth: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      'How deep spawned agents may spawn again (default 3); at the limit the spawn tools are not offered',
    ),
  max_fanout: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Most agents one model turn may start (default 8); further spawn calls of that turn are tool errors the model sees. Every agent also counts as one of the run's max_steps",
    ),
});

/** A drone: one LLM call, with an optional tool-use loop. */
export const droneSchema = lazily(() =>
  fileObject(
    {
      ...nodeBase,
      type: z.enum(DRONE_TYPES).optional().describe('Absent, "ai" or "drone": an LLM call'),
      usr_prompt: template('The user message'),
      sys_prompt: template('The system prompt; default "You are a helpful assistant."').optional(),
      model: z
        .string()
        .min(1)
        .optional()
        .describe(
          "openai:<model>, anthropic:<model>, sampling (or its alias client: the MCP client's model), or a bare name (claude-* is Anthropic, anything else OpenAI)",
        ),
      client_fallback: z
        .string()
        .min(1)
        .optional()
        .describe(
          "Model used instead of the MCP client's (model sampling/client) when the run has no client that can sample, e.g. \"openai:gpt-5.4-mini\"; default the hatchery's client_fallback, else the environment's default model",
        ),
      base_url: z.url().optional().describe('OpenAI-compatible endpoint (Ollama, vLLM, ...) for this node'),
      api_key_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name, e.g. GROQ_API_KEY')
        .optional()
        .describe(
          "Environment variable whose value is the API key sent to base_url. Without it a base_url gets no key: OPENAI_API_KEY and ANTHROPIC_API_KEY go only to their vendor's endpoint",
        ),
      temperature: z.number().min(0).max(2).optional(),
      max_tokens: z.number().int().min(1).optional().describe('Maximum tokens of the reply'),
      timeout_ms: timeoutMs
        .optional()
        .describe(
          'Time one model call may take in milliseconds, retries and their waits included (default 300000)',
        ),
      stream: z.boolean().optional().describe('Stream the reply from the provider (default false)'),
      cache: z
        .boolean()
        .optional()
        .describe("Prompt caching of Anthropic calls (default: the hatchery's `cache`, else true)"),
      tools: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'Tools offered to the model: built-in names, hatch:<file>, node:<Name>, mcp:<server>[/<tool>], js:<module>#<export>',
        ),
      mcp: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'Original Hatchery form: MCP servers as command lines or http(s) URLs; all their tools are offered',
        ),
      max_turns: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('Maximum model turns of the tool-use loop (default 10)'),
      tool_output_limit: z
        .number()
        .int()
        .min(100)
        .optional()
        .describe(
          'Largest tool result shown to the model, in characters (default 20000); longer ones are cut with a note',
        ),
      route: z
        .enum(ROUTES)
        .optional()
        .describe(
          'How a next list is followed: "match" (default) finds node names in the output; "choose" asks the model to pick one (supervisor)',
        ),
      spawn: spawnSchema.optional().describe('Offer the spawn_agent and spawn_agents_parallel tools'),
      conversation: z
        .string()
        .min(1)
        .optional()
        .describe("Continue this drone's message history instead of starting a fresh conversation"),
      output_schema: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          'JSON Schema of the reply: asks for structured output, validates it, exposes fields as out.<node>.<field>',
        ),
    },
    droneAliases,
  ),
);

/** One spawn template as written in a file. */
export type SpawnTemplateDef = z.infer<typeof spawnTemplateSchema>;

/** A drone node as written in a file (after alias normalisation). */
export type DroneDef = z.infer<ReturnType<typeof droneSchema>>;

/**
 * The drone kind (a node without `type` is one): it calls a model (open world), and its MCP servers
 * may change things; its model may call its tools and its spawned agents' tools.
 */
export const droneKind = nodeKind({
  // Its model calls and tool calls are the steps, each checkpointed as it ends.
  wholeStep: false,
  types: DRONE_TYPES,
  schema: droneSchema,
  aliases: droneAliases,
  hints: (def) =>
    Array.isArray(def.mcp) && def.mcp.length > 0 ? { openWorld: true, readOnly: false } : { openWorld: true },
  toolRefs: (def, take) => {
    if (Array.isArray(def.tools))
      def.tools.forEach((r, i) => {
        take(r, `tools/${i}`, false);
      });
    const spawn = def.spawn as { templates?: { tools?: unknown }[] } | undefined;
    spawn?.templates?.forEach((t, j) => {
      if (Array.isArray(t.tools))
        t.tools.forEach((r, i) => {
          take(r, `spawn/templates/${j}/tools/${i}`, false);
        });
    });
  },
});
