/**
 * Checks that a 200 reply is what the endpoint should send. A wrong base_url often reaches a web page
 * or another API that answers 200: without this, its HTML or `{}` became an empty successful output.
 */
import { HatcheryError } from '../core/errors.js';
import { displayURL, redactSecrets } from './errors.js';

/** The parts of the SDKs' raw Response the checks read. */
export interface ReplyInfo {
  url: string;
  headers: { get(name: string): string | null };
}

/** The endpoint as safe to print: the URL the call went to, without credentials or query. */
export function endpointOf(response: ReplyInfo | undefined, fallback: string): string {
  return displayURL(response?.url || fallback);
}

function preview(body: unknown, apiKey: string | undefined): string {
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  const flat = redactSecrets(text.replace(/\s+/g, ' ').trim(), apiKey);
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat;
}

/** What {@link notAReply} reports. */
export interface WrongReply {
  /** `OpenAI` or `Anthropic`: names the base-URL variable in the hint. */
  vendor: string;
  /** What the body should have been, e.g. `chat completion`. */
  what: string;
  endpoint: string;
  response: ReplyInfo | undefined;
  /** The parsed body (text when it was not JSON); undefined for a stream. */
  body?: unknown;
  /** Scrubbed from the preview. */
  apiKey?: string | undefined;
}

/** The PROVIDER error for a 200 reply that is not what the endpoint should send. */
export function notAReply({ vendor, what, endpoint, response, body, apiKey }: WrongReply): HatcheryError {
  const type = response?.headers.get('content-type')?.split(';')[0]?.trim() || 'no content-type';
  const shown = preview(body, apiKey);
  return new HatcheryError(
    'PROVIDER',
    `the model endpoint ${endpoint} returned 200 with a body that is not a ${what} (${type}${shown ? `: "${shown}"` : ''}); check base_url (or the ${vendor.toUpperCase()}_BASE_URL variable)`,
    { endpoint },
  );
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** True for an OpenAI chat completion: `choices[0].message` is an object. */
export function isChatCompletion(body: unknown): boolean {
  if (!isObject(body) || !Array.isArray(body.choices)) return false;
  const first = body.choices[0] as unknown;
  return isObject(first) && isObject(first.message);
}

/** True for an Anthropic message: `content` is an array of blocks. */
export function isAnthropicMessage(body: unknown): boolean {
  return isObject(body) && Array.isArray(body.content);
}
