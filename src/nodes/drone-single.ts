import { type ErrorContext, HatcheryError } from '../core/errors.js';
import type {
  CompiledNode,
  NodeBase,
  NodeResult,
  Router,
  RunContext,
  RunServices,
  Template,
} from '../engine/contracts.js';
import { meteredResult } from '../engine/metered.js';
import type { Endpoint, ResolvedModel } from '../providers/resolve.js';
import type { ChatMessage, ChatRequest, Provider } from '../providers/types.js';

/** The system prompt of drones that set none, as in the original Hatchery. */
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';

/**
 * A drone's model, resolved once per runtime and sampling client instead of on every execution (see
 * RunServices.resolveModel); failures are not kept, so a missing key is reported every time.
 */
export class DroneModel {
  private services: RunServices | undefined = undefined;
  private sampling: Provider | undefined = undefined;
  private resolved: ResolvedModel | undefined = undefined;

  constructor(
    readonly spec: string | undefined,
    readonly baseURL: Endpoint | undefined,
    readonly where: ErrorContext,
    readonly clientFallback: string | undefined,
  ) {}

  /** The resolved model for this scope's runtime and sampling client. */
  resolve(scope: RunContext): ResolvedModel {
    const { services, sampling } = scope.shared;
    const last = this.resolved;
    if (last !== undefined && this.services === services && this.sampling === sampling) return last;
    const resolved = services.resolveModel(
      this.spec,
      this.baseURL,
      sampling,
      this.where,
      this.clientFallback,
    );
    this.services = services;
    this.sampling = sampling;
    this.resolved = resolved;
    return resolved;
  }
}

/** What a single drone's execution reads besides its model (see singleDrone). */
export interface SingleDroneParts {
  /** The model spec, base URL, error place and client fallback (see DroneModel). */
  readonly spec: string | undefined;
  readonly baseURL: Endpoint | undefined;
  readonly where: ErrorContext;
  readonly clientFallback: string | undefined;
  readonly usr: Template | undefined;
  readonly sys: Template | undefined;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly stream: boolean | undefined;
  /** Only `false` is sent: caching is the default, and requests (cassette keys) stay as they were. */
  readonly noCache: boolean;
}

/**
 * A drone that makes one model call and keeps nothing, as its own compiled node. Everything an
 * execution reads is in this one object (its model cache too), and `exec` is a method of the class's
 * prototype: a closure per node made 100,000 functions and contexts in a 100,000-node file (each node
 * an object more to reach per step, a cache miss), and kept the drone's fields away from the node.
 * Every instance has one shape: its fields are set in one order by the constructor.
 */
class SingleDrone extends DroneModel implements CompiledNode {
  readonly name: string;
  readonly kind: string;
  readonly index: number;
  readonly route: Router;
  readonly saveOutput: string | undefined;
  readonly writeOutput: Template | undefined;
  readonly maxVisits: number | undefined;
  readonly onLimit: string | undefined;
  successor: CompiledNode | undefined = undefined;
  readonly usr: Template | undefined;
  readonly sys: Template | undefined;
  /** A constant system prompt's text, rendered never. */
  readonly sysText: string | undefined;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly stream: boolean | undefined;
  readonly noCache: boolean;

  constructor(base: NodeBase, p: SingleDroneParts) {
    super(p.spec, p.baseURL, p.where, p.clientFallback);
    this.name = base.name;
    this.kind = base.kind;
    this.index = base.index;
    this.route = base.route;
    this.saveOutput = base.saveOutput;
    this.writeOutput = base.writeOutput;
    this.maxVisits = base.maxVisits;
    this.onLimit = base.onLimit;
    this.usr = p.usr;
    this.sysText = p.sys?.text;
    // A constant system prompt is never rendered: its Template need not stay loaded.
    this.sys = this.sysText === undefined ? p.sys : undefined;
    this.temperature = p.temperature;
    this.maxTokens = p.maxTokens;
    this.timeoutMs = p.timeoutMs;
    this.stream = p.stream;
    this.noCache = p.noCache;
  }

  /** The call's request; its fields in a fixed order (see onRetry). */
  request(scope: RunContext, system: string, user: ChatMessage, model: string): ChatRequest {
    const req: ChatRequest = {
      model,
      system,
      messages: [user],
      temperature: this.temperature,
      maxTokens: this.maxTokens,
      timeoutMs: this.timeoutMs,
      stream: this.stream,
      signal: scope.signal,
      // Declared here: metered sets it on each call while someone listens, and a field added to
      // every request (a new hidden class per object) made V8 keep them past young GCs.
      onRetry: undefined,
    };
    if (this.noCache) req.cache = false;
    return req;
  }

  /** Resolves the model before any node runs: a missing key fails the run there. */
  preflight(scope: RunContext): void {
    this.resolve(scope);
  }

  /** One execution: the prompts, then the metered call whose answer is the node's result. */
  exec(scope: RunContext): Promise<NodeResult> {
    try {
      const usr = this.usr;
      if (!usr) throw new HatcheryError('TEMPLATE', 'template failed to compile', this.where);
      const sys = this.sys;
      const system = this.sysText ?? (sys ? scope.render(sys) : DEFAULT_SYSTEM_PROMPT);
      const user: ChatMessage = { role: 'user', content: scope.render(usr) };
      const resolved = this.resolve(scope);
      return meteredResult(scope, resolved, this.name, this.request(scope, system, user, resolved.model));
    } catch (err) {
      // A rejection, as from the async exec of the other drones.
      return Promise.reject(err);
    }
  }
}

/**
 * The compiled node of a drone that makes one model call and keeps nothing: no async frame,
 * conversation or copy between the provider's answer and the walk (see SingleDrone).
 */
export function singleDrone(base: NodeBase, parts: SingleDroneParts): CompiledNode {
  return new SingleDrone(base, parts);
}
