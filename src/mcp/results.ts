import type { CallToolResult } from '@modelcontextprotocol/server';

/**
 * The one shape of every tool result this server sends: a JSON object, carried twice, as
 * `structuredContent` (what Claude Code and other structured clients read) and as the only text
 * block (what Claude Desktop and text-only clients read). The shapes are:
 *
 * - a run that ended well: `{ output, run_id, usage?, journal? }`, where `output` is the final text
 *   (or the structured value of a final node whose schema is not an object);
 * - a run of a tool that declares an `outputSchema`: the object itself (clients check it against
 *   the schema), its tokens and cost (and an incomplete journal) in `_meta` only;
 * - a failure: `{ error, code, ... }` (`isError: true`), plus what the failure adds (a budget's
 *   `limit`, `spent` and `partial` outputs; a question's `question` and `run_id`);
 * - the generic tools' answers: their fields (`run_id`, `state`, `runs`, ...) and `next_step` when
 *   the caller has something to do next.
 *
 * OutboundGuard.result redacts and caps the object, moves a large output to a resource, and writes
 * the text block from the result, so both copies are always the same JSON.
 */
export type ResultValue = Record<string, unknown>;

/**
 * A result carrying `value` as structured content and as its one text block (compact JSON). With
 * `textOnly`, an error result of a tool that declares an `outputSchema`: the JSON in the text block
 * only, since clients check any structuredContent against the schema (the 2025 SDK client even for
 * errors) and `{ error, code }` cannot match it.
 */
export function jsonResult(
  value: ResultValue,
  options: { isError?: boolean; textOnly?: boolean; _meta?: Record<string, unknown> } = {},
): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(value) }] };
  if (!options.textOnly) result.structuredContent = value;
  if (options.isError || options.textOnly) result.isError = true;
  if (options._meta) result._meta = options._meta;
  return result;
}

/** The error result `{ error, code: INTERNAL }` of a failure that has no code of its own. */
export function internalError(text: string): CallToolResult {
  return jsonResult({ error: text, code: 'INTERNAL' }, { isError: true });
}

/**
 * The value of a run that ended well, for tools without an output schema; `journal: "incomplete"`
 * when writes of its journal failed (a full disk), so a caller knows resume may lack its records.
 */
export function outputValue(
  output: unknown,
  runId: string | undefined,
  usage: Record<string, number> | undefined,
  journal?: 'incomplete',
): ResultValue {
  const value: ResultValue = { output };
  if (runId !== undefined) value.run_id = runId;
  if (usage && Object.keys(usage).length > 0) value.usage = usage;
  if (journal !== undefined) value.journal = journal;
  return value;
}

/** The object of a structured content, or undefined when a result has none (or a non-object one). */
export function structuredOf(result: CallToolResult): ResultValue | undefined {
  const s = result.structuredContent;
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as ResultValue) : undefined;
}
