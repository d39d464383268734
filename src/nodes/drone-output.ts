import { HatcheryError } from '../core/errors.js';
import type { CompileContext } from '../engine/contracts.js';
import type { ChatMessage, ChatRequest, Provider, Usage } from '../providers/types.js';
import { addUsage } from '../providers/types.js';
import { issuesText } from '../schema/issues.js';
import {
  isPlainJsonSchema,
  jsonSchemaValidator,
  lazyOutputSchema,
  type OutputSchema,
} from './plain-schema.js';

/** Builds the validator of an output_schema at load time; an unusable schema is a problem. */
export function compileOutputSchema(
  schema: Record<string, unknown> | undefined,
  cc: CompileContext,
): OutputSchema | undefined {
  if (!schema) return undefined;
  if (isPlainJsonSchema(schema)) return lazyOutputSchema(schema);
  try {
    return { json: schema, validator: jsonSchemaValidator(schema) };
  } catch (err) {
    cc.problem('output_schema', `not a usable JSON Schema: ${(err as Error).message}`);
    return undefined;
  }
}

/** Parses a reply as JSON (tolerating a ```json fence) and validates it; returns the value or why not. */
function parseStructured(text: string, schema: OutputSchema): { value: unknown } | { error: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : text);
  } catch (err) {
    return { error: `not JSON (${(err as Error).message})` };
  }
  const res = schema.validator.safeParse(value);
  if (res.success) return { value: res.data };
  return { error: issuesText(res.error.issues, value, schema.validator) };
}

/**
 * Validates a drone's reply against its output_schema; on an invalid reply asks the model once more
 * with the validation errors, then gives up with an OUTPUT_SCHEMA error.
 */
export async function structuredReply(opts: {
  provider: Provider;
  request: ChatRequest;
  messages: ChatMessage[];
  text: string;
  schema: OutputSchema;
  usage: Usage;
  node: string;
}): Promise<{ text: string; value: unknown; messages: ChatMessage[] }> {
  const reply = (value: unknown, messages: ChatMessage[]) => ({
    text: JSON.stringify(value),
    value,
    messages,
  });
  const first = parseStructured(opts.text, opts.schema);
  if ('value' in first) return reply(first.value, opts.messages);
  const messages: ChatMessage[] = [
    ...opts.messages,
    {
      role: 'user',
      content: `Your reply does not match the required JSON Schema: ${first.error}. Reply again with only the JSON object, nothing else.`,
    },
  ];
  const res = await opts.provider.chat({
    ...opts.request,
    messages,
    tools: undefined,
    toolChoice: undefined,
    responseSchema: { name: `${opts.node.replace(/[^A-Za-z0-9_-]/g, '_')}_output`, schema: opts.schema.json },
  });
  addUsage(opts.usage, res.usage);
  const second = parseStructured(res.text, opts.schema);
  if ('value' in second) return reply(second.value, [...messages, { role: 'assistant', content: res.text }]);
  throw new HatcheryError(
    'OUTPUT_SCHEMA',
    `the model's reply did not match output_schema twice: ${second.error}. Simplify the schema or say in the prompt what each field must hold`,
    { field: 'output_schema' },
  );
}
