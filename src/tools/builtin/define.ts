import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import type { Tool, ToolContext, ToolResult } from '../../engine/contracts.js';
import { issuesText } from '../../schema/issues.js';

/** `args` as `schema` parses them, or a TOOL error of the tool `name` (reference `ref`) naming the field. */
export function toolArgs<S extends z.ZodType>(schema: S, args: unknown, name: string, ref: string) {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const why = issuesText(parsed.error.issues, args, schema);
  throw new HatcheryError('TOOL', `invalid arguments for ${name}: ${why}`, { tool: ref });
}

/** Declares a built-in tool from a zod schema: arguments are validated and errors name the field. */
export function defineBuiltin<S extends z.ZodObject>(spec: {
  name: string;
  description: string;
  schema: S;
  /** No I/O, cannot hang: skip the timeout and cancellation machinery. */
  instant?: boolean;
  run: (args: z.infer<S>, tc: ToolContext) => Promise<string | ToolResult>;
}): Tool {
  // Built on first read, not at import: serving files needs no built-in tool's JSON Schema.
  let inputSchema: Record<string, unknown> | undefined;
  return {
    name: spec.name,
    description: spec.description,
    get inputSchema() {
      if (!inputSchema) {
        inputSchema = z.toJSONSchema(spec.schema, { io: 'input' }) as Record<string, unknown>;
        delete inputSchema.$schema;
      }
      return inputSchema;
    },
    ref: spec.name,
    instant: spec.instant,
    async call(args, tc) {
      const res = await spec.run(toolArgs(spec.schema, args, spec.name, spec.name), tc);
      return typeof res === 'string' ? { text: res } : res;
    },
  };
}
