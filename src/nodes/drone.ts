import { HatcheryError } from '../core/errors.js';
import type {
  CompileContext,
  NodeKindImpl,
  NodeResult,
  RunContext,
  RunServices,
  Tool,
} from '../engine/contracts.js';
import { metered } from '../engine/metered.js';
import { clientFallbackProblem, modelSpecProblem, type ResolvedModel } from '../providers/resolve.js';
import type { ChatMessage, ChatRequest, Provider } from '../providers/types.js';
import type { DroneDef } from '../schema/drone.js';
import { compileToolRefs } from '../tools/compile.js';
import { converse } from './converse.js';
import { compileOutputSchema, structuredReply } from './drone-output.js';
import { chooseNext, compileChoice } from './drone-route.js';
import { compileSpawn, spawnTools } from './drone-spawn.js';

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
 * Drone: renders its prompts, calls the model (with the tool-use loop when it has tools or spawn
 * templates), then optionally validates structured output and chooses its successor.
 */
export const droneImpl: NodeKindImpl<DroneDef> = {
  compile(def, base, cc) {
    const usr = cc.template(def.usr_prompt, 'usr_prompt');
    // Without a sys_prompt the drone says DEFAULT_SYSTEM_PROMPT, or what the conversation it continues said.
    const sys = def.sys_prompt === undefined ? undefined : cc.template(def.sys_prompt, 'sys_prompt');
    const refs = compileToolRefs(def, cc);
    const spawn = compileSpawn(def.spawn, cc);
    checkModels(def, base.name, cc);
    const choice = compileChoice(def.next, def.route, cc);
    const schema = compileOutputSchema(def.output_schema, cc);
    // Only a drone some other drone continues keeps its message history.
    const keep = cc.graph.conversationTargets.has(base.name);
    // A conversation target that is missing or not a drone is reported by the loader's graph checks.
    const modelSpec = def.model ?? cc.def.model;
    const where = { file: cc.file, node: base.name, field: def.model ? 'model' : undefined };
    const clientFallback = def.client_fallback ?? cc.def.client_fallback;
    // Only `false` is sent: caching is the default, and requests (cassette keys) stay as they were.
    const noCache = (def.cache ?? cc.def.cache) === false;

    const endpoint = def.base_url === undefined ? undefined : { url: def.base_url, keyVar: def.api_key_env };
    // The model, resolved again only for another runtime or sampling client (see RunServices.resolveModel).
    let last: { services: RunServices; sampling: Provider | undefined; resolved: ResolvedModel } | undefined;
    const resolve = (scope: RunContext): ResolvedModel => {
      const { services, sampling } = scope.shared;
      if (last !== undefined && last.services === services && last.sampling === sampling)
        return last.resolved;
      const resolved = services.resolveModel(modelSpec, endpoint, sampling, where, clientFallback);
      last = { services, sampling, resolved };
      return resolved;
    };
    const name = base.name;
    const responseSchema = schema
      ? { name: `${base.name.replace(/[^A-Za-z0-9_-]/g, '_')}_output`, schema: schema.json }
      : undefined;

    return {
      ...base,
      preflight: (scope) => {
        resolve(scope);
      },
      exec: async (scope) => {
        if (!usr) throw new HatcheryError('TEMPLATE', 'template failed to compile', where);
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
        const resolved = resolve(scope);
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
        if (noCache) request.cache = false;
        const extra = spawn
          ? spawnTools(
              scope,
              spawn,
              {
                system,
                modelSpec,
                baseURL: endpoint,
                clientFallback,
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
          responseSchema,
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
        if (keep) scope.local.conversations.set(name, { system, messages });
        const result: NodeResult = { text, usage };
        if (value !== undefined) result.value = value;
        if (choice) result.next = await chooseNext({ provider, request, messages, spec: choice, usage });
        return result;
      },
    };
  },
};
