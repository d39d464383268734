import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

/**
 * Reading a 2026-07-28 request's per-request `_meta` envelope (`ctx.mcpReq.envelope`, or the raw
 * `_meta` of a body not yet dispatched). Values come from the client: every shape is checked.
 */
function object(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Whether an envelope claims a protocol version, which makes its request a 2026-era one. */
export function claimsVersion(envelope: unknown): boolean {
  return object(envelope)?.[PROTOCOL_VERSION_META_KEY] !== undefined;
}

/** The client capabilities an envelope declares, if it declares any. */
export function envelopeCapabilities(envelope: unknown): Record<string, unknown> | undefined {
  return object(object(envelope)?.[CLIENT_CAPABILITIES_META_KEY]);
}

/** Whether an envelope's client capabilities declare the extension `id` (an object, `{}` included). */
export function declaresExtension(envelope: unknown, id: string): boolean {
  return object(object(envelopeCapabilities(envelope)?.extensions)?.[id]) !== undefined;
}
