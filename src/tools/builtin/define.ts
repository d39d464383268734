import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import type { Tool, ToolContext, ToolResult } from '../../engine/contracts.js';
import { issuesText } from '../../schema/issues.js';

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
      const parsed = spec.schema.safeParse(args);
      if (!parsed.success) {
        const why = issuesText(parsed.error.issues, args, spec.schema);
        throw new HatcheryError('TOOL', `invalid arguments for ${spec.name}: ${why}`, { tool: spec.name });
      }
      const res = await spec.run(parsed.data, tc);
      return typeof res === 'string' ? { text: res } : res;
    },
  };
}
