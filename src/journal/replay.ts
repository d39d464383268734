/**
 * The journal as a cassette (run --replay-run): its model calls and its calls of recorded tools
 * (MCP, http_request) become cassette entries, answered by the same replay machinery.
 */
import { secretValues } from '../core/secrets.js';
import { chatRequestShape, recordedToolRef, redactDeep, requestKey, toolRequestShape } from './canonical.js';
import type { JournalRecord } from './store.js';

/**
 * One recorded call: what was asked (canonical, redacted), who asked, and the answer; a cassette's
 * entries have this shape (runtime/cassette/format.ts).
 */
export interface RecordedCall {
  type: 'model' | 'tool';
  /** requestKey() of `request`. */
  key: string;
  /** The node that made the call. */
  node?: string;
  request: Record<string, unknown>;
  response: Record<string, unknown>;
}

/**
 * The cassette entries of a run's journal records, in call order. A model call keeps the key the
 * journal computed (or gets it from its recorded request); failed calls are left out.
 */
export function journalEntries(
  records: readonly JournalRecord[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): RecordedCall[] {
  const secrets = secretValues(env);
  const entries: RecordedCall[] = [];
  for (const r of records) {
    const node = typeof r.node === 'string' ? r.node : undefined;
    if (r.type === 'model_call' && r.error === undefined) {
      const request =
        r.request && typeof r.request === 'object'
          ? (r.request as Record<string, unknown>)
          : { vendor: r.vendor, model: r.model };
      // A journal keeps requests in the shape the cassette hashes (chatRequestShape, redacted).
      const shaped =
        'messages' in request && !('vendor' in request)
          ? chatRequestShape(String(r.vendor), request as never)
          : request;
      const key =
        typeof r.key === 'string'
          ? r.key
          : requestKey(redactDeep(shaped, secrets) as Record<string, unknown>);
      const response: Record<string, unknown> = { text: typeof r.text === 'string' ? r.text : '' };
      if (r.toolCalls !== undefined) response.toolCalls = r.toolCalls;
      if (r.usage !== undefined) response.usage = r.usage;
      if (r.stopReason !== undefined) response.stopReason = r.stopReason;
      entries.push({ type: 'model', key, node, request: shaped, response });
    } else if (
      r.type === 'tool_call' &&
      typeof r.ref === 'string' &&
      recordedToolRef(r.ref) &&
      typeof r.tool === 'string'
    ) {
      const args = (r.args as Record<string, unknown> | undefined) ?? {};
      const request = redactDeep(toolRequestShape(r.ref, r.tool, args), secrets) as Record<string, unknown>;
      const response: Record<string, unknown> = { text: typeof r.result === 'string' ? r.result : '' };
      if (r.isError === true) response.isError = true;
      entries.push({ type: 'tool', key: requestKey(request), node, request, response });
    }
  }
  return entries;
}
