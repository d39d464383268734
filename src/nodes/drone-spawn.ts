import { formatError, HatcheryError } from '../core/errors.js';
import type { CompileContext, RunContext, Tool, ToolRef } from '../engine/contracts.js';
import { metered } from '../engine/metered.js';
import type { Template } from '../engine/templates/templates.js';
import type { Endpoint } from '../providers/resolve.js';
import type { ChatRequest, ToolCall } from '../providers/types.js';
import { addUsage } from '../providers/types.js';
import type { SpawnTemplateDef } from '../schema/drone.js';
import { compileToolRefs } from '../tools/compile.js';
import { converse } from './converse.js';

/** Default nesting limit of spawned agents. */
const DEFAULT_SPAWN_DEPTH = 3;
/** Default number of agents one model turn may start (spawn.max_fanout). */
const DEFAULT_MAX_FANOUT = 8;
const DEFAULT_SPAWN_PROMPT =
  'You are a focused helper agent. Complete the task you are given and reply with the result only.';

interface SpawnTemplate {
  name: string;
  desc: string;
  sys?: Template;
  model?: string;
  refs: ToolRef[];
  allowAddition: boolean;
}

/** A drone's compiled spawn configuration. */
export interface SpawnSpec {
  templates: Map<string, SpawnTemplate>;
  maxDepth: number;
  anyAddition: boolean;
  /** Refuses the spawn calls of one model turn past max_fanout (ConverseOptions.refuse). */
  refuse: (calls: readonly ToolCall[]) => (string | undefined)[] | undefined;
}

/** What a spawned agent inherits from the drone that spawns it. */
export interface SpawnParent {
  system: string;
  modelSpec: string | undefined;
  baseURL: Endpoint | undefined;
  /** The calling drone's client_fallback: its agents fall back like it when the client cannot sample. */
  clientFallback: string | undefined;
  refs: readonly ToolRef[];
  request: ChatRequest;
  node: string;
}

/** Compiles a drone's `spawn` block: template prompts, tool references, unique names. */
export function compileSpawn(
  spawn: { templates: SpawnTemplateDef[]; max_depth?: number; max_fanout?: number } | undefined,
  cc: CompileContext,
): SpawnSpec | undefined {
  if (!spawn) return undefined;
  const templates = new Map<string, SpawnTemplate>();
  spawn.templates.forEach((t, i) => {
    const field = `spawn/templates/${i}`;
    if (templates.has(t.name)) cc.problem(`${field}/name`, `two spawn templates named "${t.name}"`);
    templates.set(t.name, {
      name: t.name,
      desc: t.desc,
      sys: t.sys_prompt === undefined ? undefined : cc.template(t.sys_prompt, `${field}/sys_prompt`),
      model: t.model,
      refs: compileToolRefs({ tools: t.tools }, { ...cc, problem: (f, m) => cc.problem(`${field}/${f}`, m) }),
      allowAddition: t.allow_prompt_addition === true,
    });
  });
  return {
    templates,
    maxDepth: spawn.max_depth ?? DEFAULT_SPAWN_DEPTH,
    anyAddition: [...templates.values()].some((t) => t.allowAddition),
    refuse: fanoutLimit(spawn.max_fanout ?? DEFAULT_MAX_FANOUT),
  };
}

/** Agents a tool call asks for: 1 for spawn_agent, its task count for spawn_agents_parallel, else 0. */
function agentsAsked(call: ToolCall): number {
  // A call whose arguments did not parse starts nothing (the loop answers it with the parse error).
  if (call.argsError !== undefined) return 0;
  if (call.name === 'spawn_agent') return 1;
  if (call.name !== 'spawn_agents_parallel') return 0;
  const tasks = call.args.tasks;
  return Array.isArray(tasks) ? tasks.length : 0;
}

/**
 * The per-turn fan-out limit: the spawn calls of one turn run in the order the model gave them while
 * their agents fit in `max`; each later one (a whole spawn_agents_parallel call) is an error the model
 * sees. Decided before any call runs, so which calls run never depends on timing.
 */
function fanoutLimit(max: number): SpawnSpec['refuse'] {
  return (calls) => {
    let left = max;
    let asked = 0;
    for (const c of calls) asked += agentsAsked(c);
    if (asked <= max) return undefined;
    const refused: (string | undefined)[] = [];
    calls.forEach((c, i) => {
      const n = agentsAsked(c);
      if (n === 0) return;
      if (n <= left) left -= n;
      else
        refused[i] =
          `not started: at most ${max} agents per turn (spawn.max_fanout) and this turn asked for ${asked}; spawn fewer or in later turns`;
    });
    return refused;
  };
}

/**
 * Claims one step of the run tree for a spawned agent: agents count against max_steps like node
 * executions, so a model that spawns copies of itself cannot make more than max_steps of them.
 */
function claimStep(scope: RunContext, node: string): void {
  const shared = scope.shared;
  if (shared.steps >= shared.maxSteps) {
    throw new HatcheryError(
      'MAX_STEPS',
      `no agent started: the run used all its max_steps (${shared.maxSteps}), and each node execution and spawned agent takes one; answer with what you have (or raise max_steps in the file or with --max-steps)`,
      { file: scope.hatchery.file, node, field: 'max_steps' },
    );
  }
  shared.steps++;
  shared.durable?.spent?.({ steps: 1 });
}

/** The spawn tools offered at `depth` (the depth their agents will have), or none at the limit. */
export function spawnTools(scope: RunContext, spec: SpawnSpec, parent: SpawnParent, depth: number): Tool[] {
  if (depth > spec.maxDepth) return [];
  const names = [...spec.templates.keys()];
  const choices = [...spec.templates.values()].map((t) => `- ${t.name}: ${t.desc}`).join('\n');
  const taskProps: Record<string, unknown> = {
    template: { type: 'string', enum: names, description: `Which kind of agent:\n${choices}` },
    task: { type: 'string', description: 'The task, stated completely: the agent sees nothing else' },
  };
  if (spec.anyAddition) {
    taskProps.system_prompt_addition = {
      type: 'string',
      description: 'Extra instructions for the agent (only templates that allow it use them)',
    };
  }
  const taskSchema = { type: 'object', properties: taskProps, required: ['template', 'task'] };
  // Each agent runs under the signal of the tool call that spawned it: a timed-out or cancelled
  // call ends its agents (and everything they started), not only the wait for them.
  const one = async (args: Record<string, unknown>, signal: AbortSignal, call: number | undefined) => {
    const tmpl = spec.templates.get(String(args.template));
    if (!tmpl) {
      throw new HatcheryError(
        'TOOL',
        `unknown template "${String(args.template)}"; templates: ${names.join(', ')}`,
      );
    }
    if (typeof args.task !== 'string' || args.task.trim() === '') {
      throw new HatcheryError('TOOL', 'task must be a non-empty string');
    }
    const task = args.task;
    const addition =
      typeof args.system_prompt_addition === 'string' ? args.system_prompt_addition : undefined;
    claimStep(scope, parent.node);
    // An ephemeral agent: a fresh conversation whose user message is the task.
    const agent = scope.child({}, { signal, call, agent: true });
    const own = tmpl.sys
      ? tmpl.sys.render({ ...agent.vars, task })
      : tmpl.name === 'self'
        ? ''
        : DEFAULT_SPAWN_PROMPT;
    let system = tmpl.name === 'self' ? [parent.system, own].filter(Boolean).join('\n\n') : own;
    if (addition && tmpl.allowAddition) system = `${system}\n\n${addition}`;
    const where = { node: parent.node, field: 'spawn', template: tmpl.name };
    const resolved = agent.shared.services.resolveModel(
      tmpl.model ?? parent.modelSpec,
      parent.baseURL,
      agent.shared.sampling,
      where,
      parent.clientFallback,
    );
    const request: ChatRequest = {
      ...parent.request,
      signal: agent.signal,
      model: resolved.model,
      system,
      messages: [{ role: 'user', content: task }],
    };
    const extra = spawnTools(agent, spec, parent, depth + 1);
    const { text: output, usage } = await converse(agent, {
      node: parent.node,
      provider: metered(agent, resolved, parent.node),
      request,
      refs: tmpl.name === 'self' && tmpl.refs.length === 0 ? parent.refs : tmpl.refs,
      extraTools: extra,
      refuse: extra.length > 0 ? spec.refuse : undefined,
    });
    // Spawned agents are not nodes: their tokens go straight into the run's total.
    addUsage(agent.shared.usage, usage);
    return { output, template: tmpl.name, depth };
  };
  return [
    {
      name: 'spawn_agent',
      description: `Start a helper agent for one focused sub-task and get its answer.\nTemplates:\n${choices}`,
      inputSchema: taskSchema,
      ref: 'spawn_agent',
      async call(args, tc) {
        return { text: JSON.stringify(await one(args, tc.signal, tc.call)) };
      },
    },
    {
      name: 'spawn_agents_parallel',
      description:
        'Start several helper agents at once for independent sub-tasks; returns all their answers.',
      inputSchema: {
        type: 'object',
        properties: { tasks: { type: 'array', minItems: 1, items: taskSchema } },
        required: ['tasks'],
      },
      ref: 'spawn_agents_parallel',
      async call(args, tc) {
        const signal = tc.signal;
        const tasks = args.tasks;
        if (!Array.isArray(tasks) || tasks.length === 0) {
          throw new HatcheryError('TOOL', 'tasks must be a non-empty list of { template, task }');
        }
        const results = await Promise.all(
          tasks.map((t) =>
            one((t ?? {}) as Record<string, unknown>, signal, tc.call).catch((err: unknown) => {
              if (signal.aborted) throw err;
              return {
                error: formatError(err),
                template: String((t as { template?: unknown })?.template),
                depth,
              };
            }),
          ),
        );
        return { text: JSON.stringify({ results }) };
      },
    },
  ];
}
