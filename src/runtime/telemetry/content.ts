/**
 * Message content in the shapes of the GenAI semantic conventions (gen_ai.input.messages,
 * gen_ai.output.messages, gen_ai.system_instructions), redacted of the run's secrets. Built only
 * when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
 */
import type { RunEvent } from '../../engine/contracts.js';
import { redactDeep } from '../../journal/canonical.js';
import type { ChatMessage } from '../../providers/types.js';

type ModelCall = Extract<RunEvent, { type: 'model_call' }>;

/** A JSON text of `value` with every string redacted of `secrets` (values, key shapes, auth headers). */
export function redactedJson(value: unknown, secrets: readonly string[]): string {
  return JSON.stringify(redactDeep(value, secrets)) ?? 'null';
}

function inputMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'user') return { role: 'user', parts: [{ type: 'text', content: m.content }] };
  if (m.role === 'tool') {
    return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.toolCallId, response: m.content }] };
  }
  const parts: Record<string, unknown>[] = [];
  if (m.content) parts.push({ type: 'text', content: m.content });
  for (const c of m.toolCalls ?? [])
    parts.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.args });
  return { role: 'assistant', parts };
}

/** The content attributes of a chat span: system instructions, the messages sent, the answer. */
export function chatContent(e: ModelCall, secrets: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {
    'gen_ai.input.messages': redactedJson(e.request.messages.map(inputMessage), secrets),
  };
  if (e.request.system) {
    out['gen_ai.system_instructions'] = redactedJson([{ type: 'text', content: e.request.system }], secrets);
  }
  if (e.text !== undefined || e.toolCalls?.length) {
    const parts: Record<string, unknown>[] = [];
    if (e.text) parts.push({ type: 'text', content: e.text });
    for (const c of e.toolCalls ?? [])
      parts.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.args });
    const message: Record<string, unknown> = { role: 'assistant', parts };
    if (e.stopReason) message.finish_reason = e.stopReason;
    out['gen_ai.output.messages'] = redactedJson([message], secrets);
  }
  return out;
}
