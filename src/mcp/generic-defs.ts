import type { Tool } from '@modelcontextprotocol/server';
import { RUN_STATUSES } from '../journal/store.js';
import { INPUT_DESCRIPTION } from './tool-defs.js';

// The generic tools' definitions apart from their calls: answering tools/list (and reserving their
// names) loads none of the call path.

/** Default time hatchery_result waits, in seconds: well under the ~60 s many clients allow a call. */
export const DEFAULT_RESULT_WAIT_S = 30;
/** Longest wait hatchery_result accepts, in seconds. */
export const MAX_RESULT_WAIT_S = 300;

const NAME = { type: 'string', description: 'Name of the hatchery (see hatchery_list)' };
/**
 * Named inputs as name/value pairs: a free-form object (`{"topic": "owls"}`, still accepted) has no
 * strict JSON Schema, and OpenAI's strict tool mode refuses the whole tool for it.
 */
const INPUTS = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'Name of a declared input (see hatchery_list)' },
      value: { type: 'string', description: 'Its value' },
    },
    required: ['name', 'value'],
    additionalProperties: false,
  },
  description:
    'Values of the named inputs the hatchery declares (see hatchery_list), e.g. [{"name": "topic", "value": "owls"}]',
};
const RUN_ID = {
  type: 'string',
  description: 'The run id returned by hatchery_start (or listed by hatchery_runs)',
};

/**
 * A generic tool's definition: no free-form object and `additionalProperties: false`, so strict
 * converters (OpenAI's Agents SDK) take it as it is; optional properties are left out of `required`
 * rather than typed `[T, "null"]`, which some clients' strict modes warn about. Strict clients
 * that send null for an optional argument still may: callGenericTool drops nulls as "not given".
 */
function tool(
  name: string,
  description: string,
  properties: Record<string, Record<string, unknown>>,
  required: string[],
  extra: Partial<Tool> = {},
): Tool {
  return {
    name,
    description,
    inputSchema: {
      type: 'object',
      properties,
      required,
      additionalProperties: false,
    } as Tool['inputSchema'],
    ...extra,
  };
}

/** The stable tools for clients that keep the tool list they saw first, and for long runs. */
export const GENERIC_TOOLS: readonly Tool[] = [
  tool(
    'hatchery_list',
    'List the hatcheries (workflows) loaded now: name, description and named inputs of each, plus files that failed to load. The list follows file changes even when your tool list does not.',
    {},
    [],
    { annotations: { title: 'List hatcheries', readOnlyHint: true, openWorldHint: false } },
  ),
  tool(
    'hatchery_run',
    'Run a hatchery by name and return its final output. Works for hatcheries added after your tool list was fetched. Named inputs go in "inputs" as name/value pairs.',
    { name: NAME, input: { type: 'string', description: INPUT_DESCRIPTION }, inputs: INPUTS },
    ['name'],
    { annotations: { title: 'Run a hatchery', openWorldHint: true } },
  ),
  tool(
    'hatchery_start',
    'Start a hatchery run in the background and return its run id at once. For runs that may outlast your tool-call timeout: then call hatchery_result with the run id until it returns the result.',
    { name: NAME, input: { type: 'string', description: INPUT_DESCRIPTION }, inputs: INPUTS },
    ['name'],
    { annotations: { title: 'Start a hatchery run', openWorldHint: true } },
  ),
  tool(
    'hatchery_status',
    'State of a run started with hatchery_start (or any run of the journal): queued, running, succeeded, failed, cancelled, input_required (with the question) or interrupted (the server stopped); the node running now, steps done, tokens and cost, and the outputs of the nodes that finished.',
    { run_id: RUN_ID },
    ['run_id'],
    { annotations: { title: 'Run status', readOnlyHint: true, openWorldHint: false } },
  ),
  tool(
    'hatchery_result',
    `Wait up to wait_seconds (default ${DEFAULT_RESULT_WAIT_S}) for a run started with hatchery_start, then return its result, or "still running" with its status; call again to keep waiting. Keep wait_seconds below your client's tool-call timeout.`,
    {
      run_id: RUN_ID,
      wait_seconds: {
        type: 'number',
        minimum: 0,
        maximum: MAX_RESULT_WAIT_S,
        description: `Seconds to wait for the run to finish (0 to ${MAX_RESULT_WAIT_S}, default ${DEFAULT_RESULT_WAIT_S})`,
      },
    },
    ['run_id'],
    { annotations: { title: 'Run result', readOnlyHint: true, openWorldHint: false } },
  ),
  tool(
    'hatchery_cancel',
    'Cancel a run started with hatchery_start: its model calls, tool calls and scripts stop. A run waiting for an answer or interrupted is marked cancelled.',
    { run_id: RUN_ID },
    ['run_id'],
    { annotations: { title: 'Cancel a run', destructiveHint: false, openWorldHint: false } },
  ),
  tool(
    'hatchery_runs',
    'List recent runs from the run journal that this session started (every run of the served files when the server lists all runs), newest first: id, hatchery, state, steps, tokens and cost. Filter by state (e.g. "interrupted", "input_required") or hatchery name.',
    {
      status: {
        type: 'string',
        enum: [...RUN_STATUSES],
        description: 'Only runs in this state',
      },
      hatchery: { type: 'string', description: 'Only runs of this hatchery' },
      limit: { type: 'integer', minimum: 1, maximum: 500, description: 'Most runs listed (default 50)' },
    },
    [],
    { annotations: { title: 'List runs', readOnlyHint: true, openWorldHint: false } },
  ),
  tool(
    'hatchery_resume',
    'Resume a run that failed or was interrupted, in the background: nodes that finished are taken from its journal (no model or tool is called again for them) and the run goes on from the node it stopped at, or from "from". Then poll with hatchery_result.',
    {
      run_id: RUN_ID,
      from: { type: 'string', description: 'Run again from this node on (default: where the run stopped)' },
      force: {
        type: 'boolean',
        description: 'Resume although the hatchery file changed since the run started',
      },
    },
    ['run_id'],
    { annotations: { title: 'Resume a run', openWorldHint: true } },
  ),
  tool(
    'hatchery_respond',
    'Answer the question a run waits on (state input_required: an ask node, or an approval before a side effect); the run goes on in the background. Then poll with hatchery_result.',
    {
      run_id: RUN_ID,
      answer: {
        type: 'string',
        description: 'Your answer (one of the choices when the question lists them)',
      },
    },
    ['run_id', 'answer'],
    { annotations: { title: 'Answer a run', openWorldHint: true } },
  ),
];

/** Names of the generic tools; hatcheries cannot take them. */
export const GENERIC_TOOL_NAMES: ReadonlySet<string> = new Set(GENERIC_TOOLS.map((t) => t.name));

/** True for the name of a generic tool. */
export function isGenericTool(name: string): boolean {
  return GENERIC_TOOL_NAMES.has(name);
}

/**
 * Default longest wait of a hatchery tool call before its run is handed off, in ms: handoff.ts's
 * DEFAULT_SYNC_WAIT_MS, here for the server's start, which does not import the call path.
 */
export const DEFAULT_SYNC_WAIT_MS = 50_000;
