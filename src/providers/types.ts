/** Token counts of one or more model calls. */
export interface Usage {
  /** All input tokens, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the vendor's prompt cache (a part of inputTokens), when it reports them. */
  cachedInputTokens?: number;
  /** Cost in US dollars, when the price of every model counted is known (see providers/prices.ts). */
  costUsd?: number;
}

/** A model's price in US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Price of input tokens read from the prompt cache (default: the input price). */
  cachedInput?: number;
}

/** A Price from its three figures, in the order price lists give them. */
export const listPrice = (input: number, cachedInput: number, output: number): Price => ({
  input,
  cachedInput,
  output,
});

/** A tool call requested by the model. */
export interface ToolCall {
  /** Provider-assigned id, echoed back with the result. */
  id: string;
  name: string;
  /** Parsed arguments; `{}` when the model sent none. */
  args: Record<string, unknown>;
  /** Set when the model's argument text was not a JSON object; the loop reports it back as a tool error. */
  argsError?: string;
}

/** One message of a conversation, independent of any vendor's wire format. */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

/** A tool offered to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>;
}

/** One model call. */
export interface ChatRequest {
  /** Vendor model id, without the vendor prefix (`openai:`). */
  model: string;
  system: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** `required` forces some tool call; `{ name }` forces that tool. Default `auto`. */
  toolChoice?: 'auto' | 'required' | { name: string };
  temperature?: number;
  maxTokens?: number;
  /** Timeout of the call in milliseconds: every attempt and retry wait together (a stream then its idle gaps). */
  timeoutMs?: number;
  stream?: boolean;
  /** Ask for JSON matching this schema (structured output). */
  responseSchema?: { name: string; schema: Record<string, unknown> };
  /** false: no prompt-cache breakpoints (Anthropic); default on. */
  cache?: boolean;
  /** Aborts the call, including retries and streaming. */
  signal: AbortSignal;
  /** Called with each streamed text fragment (streaming only); lets callers show progress. */
  onDelta?: (text: string) => void;
  /** Called before each retry wait (rate limit, overload, lost connection), so a run can show it. */
  onRetry?: (retry: RetryInfo) => void;
}

/** One retry of a model call, as ChatRequest.onRetry reports it. */
export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  waitMs: number;
  /** The failure being retried (status and message, no credentials). */
  reason: string;
  /** True for 429 responses (the provider's rate limit). */
  rateLimited: boolean;
}

/** The model's answer to one call. */
export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  /** Vendor stop reason, for diagnostics. */
  stopReason?: string;
}

/** A model backend. Small on purpose: the scripted provider implements it in a few lines. */
export interface Provider {
  /** `openai`, `anthropic`, `sampling`, `scripted`... */
  readonly id: string;
  chat(request: ChatRequest): Promise<ChatResponse>;
}

/**
 * A usage with every field present (undefined when not known). The run's counters and each metered
 * call's usage are built this way, so all of them share one object shape: a field added to some
 * objects later (the cost, once priced) would make every place that reads usages slower.
 */
export function fullUsage(
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens: number | undefined = undefined,
  costUsd: number | undefined = undefined,
): Usage {
  return { inputTokens, outputTokens, cachedInputTokens, costUsd };
}

/**
 * Dollars rounded to a millionth of a cent: binary floating point makes 5 tokens at $0.15 and 3 at
 * $0.60 per million cost $0.0000025499999999999997, which results, the journal and budget errors
 * would show as is. Exact up to $9,000,000 (2^53 of the unit).
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e12) / 1e12;
}

/** Adds `b` into `a` in place. */
export function addUsage(a: Usage, b: Usage | undefined): void {
  if (!b) return;
  a.inputTokens += b.inputTokens;
  a.outputTokens += b.outputTokens;
  if (b.cachedInputTokens) a.cachedInputTokens = (a.cachedInputTokens ?? 0) + b.cachedInputTokens;
  if (b.costUsd !== undefined) a.costUsd = roundUsd((a.costUsd ?? 0) + b.costUsd);
}

/** Options of the SDK-backed provider factories (createOpenAIProvider, createAnthropicProvider). */
export interface SdkProviderOptions {
  apiKey: string;
  /** Default: the vendor's API (or its base-URL variable, OPENAI_BASE_URL, read by the SDK). */
  baseURL?: string | undefined;
  /** Retries on 408/409/429/5xx and connection errors, with backoff honouring retry-after(-ms), within the timeout. */
  maxRetries?: number;
  /** Timeout of a call (all attempts and retry waits) when a request sets none. */
  timeoutMs?: number | undefined;
  /** Largest decoded reply accepted, in bytes (default 8 MiB); a longer one fails the call. */
  maxReplyBytes?: number | undefined;
}

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
