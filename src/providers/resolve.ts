import { type ErrorContext, HatcheryError } from '../core/errors.js';
import { didYouMean, quote } from '../schema/suggest.js';
import { PLACEHOLDER_KEY } from './errors.js';
import type { Provider } from './types.js';
import {
  bareVendor,
  findVendor,
  KEY_VARS_TEXT,
  type SdkVendor,
  VENDORS,
  vendorDefault,
  vendorInfo,
} from './vendors.js';

/** The vendors a `model` string can name: those of VENDORS, and `sampling` (the MCP client's model). */
export type Vendor = SdkVendor | 'sampling';

/** A parsed `model` string. */
export interface ModelSpec {
  vendor: Vendor;
  /** Vendor model id ('' for sampling without a preference). */
  model: string;
}

/** The provider prefixes a `model` string may start with; `client` is another name of `sampling`. */
export const MODEL_PREFIXES: readonly string[] = [...VENDORS.map((v) => v.id), 'sampling', 'client'];

/** `openai:, anthropic:`, for messages. */
const VENDOR_PREFIXES = VENDORS.map((v) => `${v.id}:`).join(', ');

/** True for the names of the MCP client's model: `sampling` and its alias `client`. */
function isClientPrefix(prefix: string): prefix is 'sampling' | 'client' {
  return prefix === 'sampling' || prefix === 'client';
}

/**
 * Why a `model` string names no provider, or undefined when it does. A bare name (no colon) is
 * allowed (claude-* is Anthropic, anything else OpenAI), but a colon after an unknown word is most
 * often a typo of a prefix that would otherwise be sent to OpenAI as part of the model id. Callers
 * skip the check for a node with its own base_url, whose server's ids may contain colons.
 */
export function modelSpecProblem(spec: string): string | undefined {
  const colon = spec.indexOf(':');
  if (colon <= 0) return undefined;
  const prefix = spec.slice(0, colon).toLowerCase();
  if (MODEL_PREFIXES.includes(prefix)) return undefined;
  const near = didYouMean(
    `${prefix}:`,
    MODEL_PREFIXES.map((p) => `${p}:`),
  );
  return `unknown provider prefix ${quote(`${spec.slice(0, colon)}:`)} in model ${quote(spec)}${near}; valid prefixes: ${VENDOR_PREFIXES}, sampling or client (or a bare model name without a colon); a model id that itself contains a colon (Ollama's llama3:8b) is written ${VENDORS[0].id}:llama3:8b`;
}

/** True when a `model` string names the MCP client's model (`sampling`, `client`, with or without a hint). */
export function isClientModel(spec: string): boolean {
  return parseModel(spec).vendor === 'sampling';
}

/**
 * Why a `client_fallback` cannot stand in for the MCP client's model, or undefined when it can: it
 * must name a provider of its own (not `sampling`/`client` again) with a known prefix. `node` names
 * the drone it is set on (undefined at the top of the file).
 */
export function clientFallbackProblem(spec: string, node?: string): string | undefined {
  const of = node === undefined ? '' : ` of node ${quote(node)}`;
  if (parseModel(spec).vendor === 'sampling') {
    return `client_fallback ${quote(spec)}${of} is the MCP client's model again; it is the model used when the client cannot sample, so name another provider's model, such as ${VENDORS.map((v) => `"${vendorDefault(v.id)}"`).join(' or ')}`;
  }
  const why = modelSpecProblem(spec);
  return why ? `client_fallback${of}: ${why}` : undefined;
}

/**
 * Parses `<vendor>:<m>`, `sampling[:<hint>]` (or `client[:<hint>]`), or a bare name (the vendor whose
 * barePrefix it has: claude-* is Anthropic; else the first vendor, OpenAI).
 */
function parseModel(spec: string): ModelSpec {
  const colon = spec.indexOf(':');
  if (colon > 0) {
    const prefix = spec.slice(0, colon).toLowerCase();
    const model = spec.slice(colon + 1);
    const vendor = findVendor(prefix);
    if (vendor) return { vendor: vendor.id, model };
    if (isClientPrefix(prefix)) return { vendor: 'sampling', model };
  }
  if (isClientPrefix(spec)) return { vendor: 'sampling', model: '' };
  return { vendor: bareVendor(spec), model: spec };
}

/** A node's own endpoint: its base_url, and the environment variable of the key it may receive. */
export interface Endpoint {
  readonly url: string;
  readonly keyVar?: string | undefined;
}

/** The host of an https URL, lowercased; undefined for other schemes (a key never goes over http). */
function vendorHost(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' ? u.hostname.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** Builds a real provider for a vendor; injected so tests and embedders can swap transports. */
export type ProviderFactory = (
  vendor: SdkVendor,
  options: { apiKey: string; baseURL: string | undefined; maxReplyBytes?: number | undefined },
) => Provider;

/** Options of the provider registry. */
export interface ProviderRegistryOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** Creates SDK-backed providers (lazy, cached per vendor, key and base URL). */
  factory: ProviderFactory;
  /** Fixed providers by vendor id; they win over the factory and need no key (tests, embedding). */
  overrides?: Partial<Record<Vendor, Provider>>;
  /** Largest decoded model reply, in bytes (the factory's default when unset). */
  maxReplyBytes?: number | undefined;
}

/** A resolved provider and the vendor model id to send it; shared by the nodes that resolve alike. */
export interface ResolvedModel {
  readonly provider: Provider;
  readonly model: string;
  readonly vendor: Vendor;
  /** The model this one stands in for (the MCP client's, when the run has no client that can sample). */
  readonly standIn?: string;
}

/** Turns `model` strings into providers, checking API keys before any call is made. */
export class ProviderRegistry {
  private readonly cache = new Map<string, Provider>();
  /**
   * One resolved model per provider and model id, shared by every node that resolves to them: a
   * file of 100,000 drones naming one model held 100,000 equal objects, each one more to reach per
   * step. Frozen, so no node can change what another sends. Kept by provider, and dropped with it
   * (the MCP client's model is a provider per run).
   */
  private readonly resolvedBy = new WeakMap<Provider, Map<string, ResolvedModel>>();

  constructor(private readonly options: ProviderRegistryOptions) {}

  /** The model used when neither the node nor the hatchery names one. */
  defaultModel(samplingAvailable: boolean): string | undefined {
    const env = this.options.env;
    if (env.HATCHERY_MODEL) return env.HATCHERY_MODEL;
    const o = this.options.overrides ?? {};
    for (const v of VENDORS) if (env[v.keyVar] || o[v.id]) return vendorDefault(v.id);
    if (samplingAvailable || o.sampling) return 'sampling';
    return undefined;
  }

  /**
   * Resolves a node's model. `sampling` is the MCP client's model for this run, if it offers one;
   * `fallback` (the node's or file's client_fallback) is used instead of it when there is none.
   * Throws NO_MODEL or MISSING_API_KEY naming the node and the variable to set.
   */
  resolve(
    spec: string | undefined,
    baseURL: Endpoint | undefined,
    sampling: Provider | undefined,
    where: ErrorContext,
    fallback?: string,
  ): ResolvedModel {
    const chosen = spec ?? this.defaultModel(sampling !== undefined) ?? fallback;
    if (!chosen) {
      throw new HatcheryError(
        'NO_MODEL',
        `no model to run this drone: set ${KEY_VARS_TEXT} (or HATCHERY_MODEL), name a model in the node or the hatchery, or call it from an MCP client that supports sampling`,
        { ...where, field: where.field ?? 'model' },
      );
    }
    const { vendor, model } = parseModel(chosen);
    const override = this.options.overrides?.[vendor];
    if (override) return this.shared(override, model || defaultFor(vendor), vendor);
    if (vendor === 'sampling') {
      if (sampling) return this.shared(sampling, model, vendor);
      return this.instead(chosen, baseURL, where, fallback);
    }
    const env = this.options.env;
    const info = vendorInfo(vendor);
    const base = baseURL?.url ?? (env[info.baseUrlVar] || undefined);
    // The vendor's key goes to the vendor (or to the base URL the user's own environment names); a
    // node's other base_url gets only the key it names, so a file cannot send OPENAI_API_KEY elsewhere.
    const own = baseURL === undefined || vendorHost(baseURL.url) === info.host;
    const keyVar = baseURL?.keyVar ?? info.keyVar;
    let apiKey = own || baseURL?.keyVar !== undefined ? env[keyVar] : undefined;
    // Servers at a node's own base_url (Ollama, vLLM) usually need no key; the SDKs need a non-empty one.
    if (!apiKey && baseURL !== undefined && baseURL.keyVar === undefined) apiKey = PLACEHOLDER_KEY;
    if (!apiKey) {
      throw new HatcheryError(
        'MISSING_API_KEY',
        `model "${chosen}" needs ${keyVar}: set it in the environment (or in the "env" of your MCP client config)`,
        { ...where, field: where.field ?? 'model', variable: keyVar },
      );
    }
    const cacheKey = `${vendor}\n${base ?? ''}\n${apiKey}`;
    let provider = this.cache.get(cacheKey);
    if (!provider) {
      provider = this.options.factory(vendor, {
        apiKey,
        baseURL: base,
        maxReplyBytes: this.options.maxReplyBytes,
      });
      this.cache.set(cacheKey, provider);
    }
    return this.shared(provider, model || defaultFor(vendor), vendor);
  }

  /** The one resolved model of `provider`, `model` and `vendor` (see resolvedBy), made on first use. */
  private shared(provider: Provider, model: string, vendor: Vendor): ResolvedModel {
    let models = this.resolvedBy.get(provider);
    if (models === undefined) {
      models = new Map();
      this.resolvedBy.set(provider, models);
    }
    // One provider may stand for several vendors (an embedder's or a test's override).
    const key = `${vendor}\n${model}`;
    let resolved = models.get(key);
    if (resolved === undefined) {
      resolved = Object.freeze({ provider, model, vendor });
      models.set(key, resolved);
    }
    return resolved;
  }

  /**
   * The model that stands in for the client's when the run has no client that can sample (the CLI,
   * or a client without sampling): the client_fallback, else the default model of the environment.
   */
  private instead(
    chosen: string,
    baseURL: Endpoint | undefined,
    where: ErrorContext,
    fallback: string | undefined,
  ): ResolvedModel {
    // The loader refuses a client_fallback that is the client's model again; this only stops a loop.
    if (fallback !== undefined && parseModel(fallback).vendor !== 'sampling')
      return {
        ...this.resolve(fallback, baseURL, undefined, { ...where, field: 'client_fallback' }),
        standIn: chosen,
      };
    const env = this.defaultModel(false);
    if (env !== undefined && parseModel(env).vendor !== 'sampling')
      return { ...this.resolve(env, baseURL, undefined, where), standIn: chosen };
    throw new HatcheryError(
      'NO_MODEL',
      `model "${chosen}"${ofNode(where)} is the MCP client's model (sampling), but this run has no client that can sample; set "client_fallback" on the drone or the hatchery (a model such as "${vendorDefault(VENDORS[0].id)}") or set ${KEY_VARS_TEXT} (or HATCHERY_MODEL) so the default model stands in`,
      { ...where, field: 'model' },
    );
  }
}

/** What a node says of itself in messages: ` of node "X"` when the place names one. */
function ofNode(where: ErrorContext): string {
  return typeof where.node === 'string' ? ` of node "${where.node}"` : '';
}

function defaultFor(vendor: Vendor): string {
  return vendor === 'sampling' ? '' : vendorInfo(vendor).defaultModel;
}
