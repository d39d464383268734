import { type ErrorContext, HatcheryError } from '../core/errors.js';
import type {
  CompileContext,
  CompiledNode,
  NodeBase,
  NodeKindImpl,
  NodeResult,
  Router,
  RunContext,
  RunServices,
  Tool,
  ToolRef,
} from '../engine/contracts.js';
import { metered } from '../engine/metered.js';
import type { Template } from '../engine/templates/templates.js';
import {
  clientFallbackProblem,
  type Endpoint,
  modelSpecProblem,
  type ResolvedModel,
} from '../providers/resolve.js';
import type { ChatMessage, ChatRequest, Provider } from '../providers/types.js';
import type { DroneDef } from '../schema/drone.js';
import { compileToolRefs } from '../tools/compile.js';
import { converse } from './converse.js';
import { compileOutputSchema, structuredReply } from './drone-output.js';
import { type ChoiceSpec, chooseNext, compileChoice } from './drone-route.js';
import { compileSpawn, type SpawnSpec, spawnTools } from './drone-spawn.js';
import type { OutputSchema } from './plain-schema.js';

/** The system prompt of drones that set none, as in the original Hatchery. */
const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';

/** The extra tools of a drone without spawn templates (shared: nothing adds to it). */
const NO_TOOLS: readonly Tool[] = Object.freeze([]);

/**
 * Load-time check of the drone's and its spawn templates' `model` provider prefixes, and of its
 * client_fallback (a model of another provider than the client's).
 */
function checkModels(def: DroneDef, node: string, cc: CompileContext): void {
  const check = (field: string, spec: string | undefined, problem: (spec: string) => string | undefined) => {
    const why = spec === undefined ? undefined : problem(spec);
    if (why) cc.problem(field, why);
  };
  // A node with its own base_url talks to an OpenAI-compatible server whose model ids may hold a colon.
  if (def.base_url === undefined) {
    check('model', def.model, modelSpecProblem);
    for (const [i, t] of (def.spawn?.templates ?? []).entries())
      check(`spawn/templates/${i}/model`, t.model, modelSpecProblem);
  }
  check('client_fallback', def.client_fallback, (spec) => clientFallbackProblem(spec, node));
}

/**
 * A compiled drone: one object holding what its runs read, its code on the prototype (shared by
 * every drone). A closure per drone held three functions and a context beside the node, more heap
 * per node and more places a run of a large file reads from.
 */
class Drone implements CompiledNode {
  readonly name: string;
  readonly kind: string;
  readonly index: number;
  readonly route: Router;
  readonly saveOutput: string | undefined;
  readonly writeOutput: Template | undefined;
  readonly maxVisits: number | undefined;
  readonly onLimit: string | undefined;
  successor: CompiledNode | undefined = undefined;
  private readonly usr: Template | undefined;
  private readonly sys: Template | undefined;
  private readonly refs: ToolRef[];
  private readonly spawn: SpawnSpec | undefined;
  private readonly choice: ChoiceSpec | undefined;
  private readonly schema: OutputSchema | undefined;
  /** Only a drone some other drone continues keeps its message history. */
  private readonly keep: boolean;
  private readonly modelSpec: string | undefined;
  private readonly endpoint: Endpoint | undefined;
  private readonly where: ErrorContext;
  private readonly clientFallback: string | undefined;
  /** Only `false` is sent: caching is the default, and requests (cassette keys) stay as they were. */
  private readonly noCache: boolean;
  private readonly responseSchema: ChatRequest['responseSchema'];
  /** The model as last resolved, and for which services and sampling client (see RunServices.resolveModel). */
  private resolved: ResolvedModel | undefined = undefined;
  private resolvedFor: RunServices | undefined = undefined;
  private resolvedSampling: Provider | undefined = undefined;

  constructor(
    private readonly def: DroneDef,
    base: NodeBase,
    cc: CompileContext,
  ) {
    this.name = base.name;
    this.kind = base.kind;
    this.index = base.index;
    this.route = base.route;
    this.saveOutput = base.saveOutput;
    this.writeOutput = base.writeOutput;
    this.maxVisits = base.maxVisits;
    this.onLimit = base.onLimit;
    this.usr = cc.template(def.usr_prompt, 'usr_prompt');
    // Without a sys_prompt the drone says DEFAULT_SYSTEM_PROMPT, or what the conversation it continues said.
    this.sys = def.sys_prompt === undefined ? undefined : cc.template(def.sys_prompt, 'sys_prompt');
    this.refs = compileToolRefs(def, cc);
    this.spawn = compileSpawn(def.spawn, cc);
    checkModels(def, base.name, cc);
    this.choice = compileChoice(def.next, def.route, cc);
    const schema = compileOutputSchema(def.output_schema, cc);
    this.schema = schema;
    // A conversation target that is missing or not a drone is reported by the loader's graph checks.
    this.keep = cc.graph.conversationTargets.has(base.name);
    this.modelSpec = def.model ?? cc.def.model;
    this.endpoint = def.base_url === undefined ? undefined : { url: def.base_url, keyVar: def.api_key_env };
    this.where = { file: cc.file, node: base.name, field: def.model ? 'model' : undefined };
    this.clientFallback = def.client_fallback ?? cc.def.client_fallback;
    this.noCache = (def.cache ?? cc.def.cache) === false;
    this.responseSchema = schema
      ? { name: `${base.name.replace(/[^A-Za-z0-9_-]/g, '_')}_output`, schema: schema.json }
      : undefined;
  }

  /** The model, resolved again only for another runtime or sampling client. */
  private model(scope: RunContext): ResolvedModel {
    const { services, sampling } = scope.shared;
    if (this.resolved !== undefined && this.resolvedFor === services && this.resolvedSampling === sampling)
      return this.resolved;
    const resolved = services.resolveModel(
      this.modelSpec,
      this.endpoint,
      sampling,
      this.where,
      this.clientFallback,
    );
    this.resolved = resolved;
    this.resolvedFor = services;
    this.resolvedSampling = sampling;
    return resolved;
  }

  preflight(scope: RunContext): void {
    this.model(scope);
  }

  async exec(scope: RunContext): Promise<NodeResult> {
    const { def, usr, sys, spawn, refs, schema, choice, name } = this;
    if (!usr) throw new HatcheryError('TEMPLATE', 'template failed to compile', this.where);
    const history =
      def.conversation === undefined ? undefined : scope.local.conversations.get(def.conversation);
    if (def.conversation !== undefined && !history) {
      throw new HatcheryError(
        'NOT_FOUND',
        `conversation "${def.conversation}" has no history yet: that drone must run before this one`,
        { field: 'conversation' },
      );
    }
    const system = sys ? scope.render(sys) : (history?.system ?? DEFAULT_SYSTEM_PROMPT);
    const user: ChatMessage = { role: 'user', content: scope.render(usr) };
    const resolved = this.model(scope);
    const provider = metered(scope, resolved, name);
    const request: ChatRequest = {
      model: resolved.model,
      system,
      messages: history ? [...history.messages, user] : [user],
      temperature: def.temperature,
      maxTokens: def.max_tokens,
      timeoutMs: def.timeout_ms,
      stream: def.stream,
      signal: scope.signal,
      onRetry: undefined,
    };
    if (this.noCache) request.cache = false;
    const extra = spawn
      ? spawnTools(
          scope,
          spawn,
          {
            system,
            modelSpec: this.modelSpec,
            baseURL: this.endpoint,
            clientFallback: this.clientFallback,
            refs,
            request,
            node: name,
          },
          1,
        )
      : NO_TOOLS;
    const conv = await converse(scope, {
      node: name,
      provider,
      request,
      refs,
      maxTurns: def.max_turns,
      extraTools: extra,
      refuse: spawn?.refuse,
      resultLimit: def.tool_output_limit,
      responseSchema: this.responseSchema,
    });
    // converse() returns fresh objects: later retries and choices add to them in place.
    const usage = conv.usage;
    let { text, messages } = conv;
    let value: unknown;
    if (schema) {
      const structured = await structuredReply({
        provider,
        request,
        messages,
        text,
        schema,
        usage,
        node: name,
      });
      ({ text, value, messages } = structured);
    }
    if (this.keep) scope.local.conversations.set(name, { system, messages });
    const result: NodeResult = { text, usage };
    if (value !== undefined) result.value = value;
    if (choice) result.next = await chooseNext({ provider, request, messages, spec: choice, usage });
    return result;
  }
}

/**
 * Drone: renders its prompts, calls the model (with the tool-use loop when it has tools or spawn
 * templates), then optionally validates structured output and chooses its successor.
 */
export const droneImpl: NodeKindImpl<DroneDef> = {
  compile: (def, base, cc) => new Drone(def, base, cc),
};
