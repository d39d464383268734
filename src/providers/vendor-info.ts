import type { Price, Provider, SdkProviderOptions } from './types.js';

/**
 * What hatchery-mcp knows of one model vendor, in one place: every part that names vendors (model
 * resolution, the provider factory, doctor, client config, cassettes, telemetry, the server's warm-up)
 * reads it from VENDORS (vendors.ts). Light: the SDK is loaded only by `load`.
 */
export interface VendorInfo<Id extends string = string> {
  /** The vendor's id and `model` prefix: `openai` in `openai:gpt-5.4-mini`. */
  id: Id;
  /** As shown to users: `OpenAI`. */
  name: string;
  /** The environment variable of the API key. */
  keyVar: string;
  /** The environment variable of a base URL that replaces the vendor's API (a compatible server). */
  baseUrlVar: string;
  /** The host of the vendor's own API: the only one its key goes to unless a node names the key. */
  host: string;
  /** The model its key selects when nothing names a model and HATCHERY_MODEL is unset. */
  defaultModel: string;
  /**
   * Bare model names (no prefix) this vendor takes: `claude-` for Anthropic. A bare name no vendor
   * claims goes to the first vendor of VENDORS.
   */
  barePrefix?: string;
  /** Loads the SDK-backed provider maker on first use: the CLI starts, and files without drones run, without the SDK. */
  load(): Promise<(options: SdkProviderOptions) => Provider>;
  /** Built-in list prices by model id (a file's `prices` and `--prices` override them). */
  prices: Readonly<Record<string, Price>>;
  /** The model id whose price an alias has (claude-opus-4 is priced as claude-opus-4-0), if any. */
  priceAlias?(model: string): string | undefined;
  /** The vendor as OpenTelemetry's gen_ai.provider.name spells it. */
  otelName: string;
  /** The stop reason the provider reports for a plain text answer (the cassette `init` writes). */
  textStop: string;
}
