import { createHash } from 'node:crypto';
import { redactText } from '../../core/secrets.js';
import type { ChatRequest } from '../../providers/types.js';

/**
 * A value as canonical JSON: object keys sorted, undefined members dropped, so the same request
 * always gives the same text (and hash) whatever order its fields were built in.
 */
export function canonicalJson(value: unknown, indent?: number): string {
  return JSON.stringify(sortKeys(value), null, indent) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = sortKeys(v);
  }
  return out;
}

/** The cassette key of a canonical (already redacted) request: 16 hex digits of its SHA-256. */
export function requestKey(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex').slice(0, 16);
}

/**
 * A deep copy of a JSON-like value with every string cleaned of secrets (the environment's secret
 * values, key shapes, authorization headers). Cassettes are committed: nothing secret may reach one,
 * and a key must not change a request's hash.
 */
export function redactDeep(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets, { authHeaders: true });
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function') continue;
    // Header maps and fields named like credentials are dropped whole, not just cleaned.
    if (/^(authorization|api[-_]?key|x-api-key|cookie|set-cookie)$/i.test(k)) {
      out[k] = '[redacted]';
      continue;
    }
    out[k] = redactDeep(v, secrets);
  }
  return out;
}

/**
 * The fields of a model request that make its cassette key (and its journal record's): what the
 * model sees, never transport details (streaming, signal, callbacks).
 */
export function chatRequestShape(vendor: string, req: ChatRequest): Record<string, unknown> {
  return {
    vendor,
    model: req.model,
    system: req.system,
    messages: req.messages,
    tools: req.tools,
    toolChoice: req.toolChoice,
    temperature: req.temperature,
    maxTokens: req.maxTokens,
    responseSchema: req.responseSchema,
  };
}

/** True for the tool references whose calls a cassette records and answers: the ones that reach other systems. */
export function recordedToolRef(ref: string): boolean {
  return ref.startsWith('mcp:') || ref === 'http_request';
}

/** The fields of a tool call that make its cassette key: the tool's reference, its name and arguments. */
export function toolRequestShape(
  ref: string,
  name: string,
  args: Record<string, unknown>,
): Record<string, unknown> {
  return { tool: ref, name, args };
}
