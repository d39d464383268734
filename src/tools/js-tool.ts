import { z } from 'zod';
import { HatcheryError, isAbortError } from '../core/errors.js';
import type { Tool, ToolRef, ToolResult } from '../engine/contracts.js';
import { toolArgs } from './builtin/define.js';

// A js: tool built from its module's export (js.ts loads the module): the schema of its arguments
// (zod 4 or JSON Schema), their check, and the call.

/** A `js:<module>#<export>` reference. */
export type JsRef = Extract<ToolRef, { kind: 'js' }>;

type Module = Record<string, unknown>;

/** What a js: function receives besides its arguments. */
export interface JsToolContext {
  /** Fires when the call times out or the run is cancelled; pass it to fetch and the like. */
  signal: AbortSignal;
}

/** The signature of a js: tool function. */
export type JsToolFunction = (args: Record<string, unknown>, ctx: JsToolContext) => unknown;

/** True for a zod 4 schema (possibly from another copy of zod). */
function isZod4(v: unknown): v is z.ZodType {
  return !!v && typeof v === 'object' && '_zod' in v && typeof (v as z.ZodType).safeParse === 'function';
}

/** The JSON Schema and validator of a schema export. */
function compileSchema(
  schema: unknown,
  what: string,
): { json: Record<string, unknown>; validator?: z.ZodType } {
  if (isZod4(schema)) {
    let json: Record<string, unknown>;
    try {
      json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    } catch (err) {
      throw new HatcheryError(
        'TOOL',
        `${what}: cannot turn the zod schema into JSON Schema: ${(err as Error).message}`,
      );
    }
    delete json.$schema;
    if (json.type !== 'object') {
      throw new HatcheryError('TOOL', `${what}: the schema must describe an object (use z.object({...}))`);
    }
    return { json, validator: schema };
  }
  // A zod 3 schema has no JSON Schema conversion here.
  if (schema && typeof schema === 'object' && '_def' in schema && !('_zod' in schema)) {
    throw new HatcheryError(
      'TOOL',
      `${what}: zod 3 schemas are not supported; use zod 4 or a JSON Schema object`,
    );
  }
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new HatcheryError('TOOL', `${what}: the schema must be a JSON Schema object or a zod schema`);
  }
  const json = schema as Record<string, unknown>;
  if (json.type !== undefined && json.type !== 'object') {
    throw new HatcheryError('TOOL', `${what}: the schema must describe an object ("type": "object")`);
  }
  let validator: z.ZodType | undefined;
  try {
    validator = z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read is still shown to the model; the function checks its own arguments.
    validator = undefined;
  }
  return { json: { type: 'object', ...json }, validator };
}

/** Builds the tool of one export, in either supported form; throws when the module has no such tool. */
export function buildTool(mod: Module, ref: JsRef): Tool {
  const what = `js:${ref.module}#${ref.export}`;
  const exp = mod[ref.export];
  let fn: JsToolFunction;
  let description: unknown;
  let schema: unknown;
  if (typeof exp === 'function') {
    fn = exp as JsToolFunction;
    description = mod[`${ref.export}Description`];
    schema = mod[`${ref.export}Schema`];
    if (schema === undefined) {
      throw new HatcheryError(
        'TOOL',
        `${what}: export "${ref.export}Schema" (a JSON Schema or zod schema of the arguments) beside the function`,
        { tool: ref.ref },
      );
    }
  } else if (exp && typeof exp === 'object') {
    const o = exp as Record<string, unknown>;
    const handler = o.handler ?? o.run ?? o.execute;
    if (typeof handler !== 'function') {
      throw new HatcheryError(
        'TOOL',
        `${what}: the exported object needs a handler, run or execute function`,
        {
          tool: ref.ref,
        },
      );
    }
    fn = handler as JsToolFunction;
    description = o.description;
    schema = o.inputSchema ?? o.schema;
    if (schema === undefined) {
      throw new HatcheryError('TOOL', `${what}: the exported object needs an inputSchema (or schema)`, {
        tool: ref.ref,
      });
    }
  } else {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function' || typeof mod[k] === 'object');
    throw new HatcheryError(
      'UNKNOWN_TOOL',
      `${what}: the module has no function or tool object "${ref.export}" (exports: ${names.join(', ') || '(none)'})`,
      { tool: ref.ref },
    );
  }
  const { json, validator } = compileSchema(schema, what);
  return {
    name: ref.export,
    description: typeof description === 'string' ? description : `${ref.export} (from ${ref.module})`,
    inputSchema: json,
    ref: ref.ref,
    async call(args, tc) {
      const input = validator ? (toolArgs(validator, args, ref.export, ref.ref) as typeof args) : args;
      try {
        // Only the call's signal: the run's context stays out of reach of module code.
        return jsResult(await fn(input, { signal: tc.signal }));
      } catch (err) {
        if (isAbortError(err) || err instanceof HatcheryError) throw err;
        throw new HatcheryError(
          'TOOL',
          `${ref.export} threw: ${(err as Error)?.message ?? String(err)}`,
          { tool: ref.ref },
          { cause: err },
        );
      }
    },
  };
}

/** Turns what a js: function returned into a tool result. */
export function jsResult(value: unknown): ToolResult {
  if (typeof value === 'string') return { text: value };
  if (value === undefined || value === null) return { text: '' };
  if (typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o);
    if (
      typeof o.text === 'string' &&
      keys.every((k) => k === 'text' || k === 'isError' || k === 'structured')
    ) {
      const r: ToolResult = { text: o.text };
      if (o.isError === true) r.isError = true;
      if (o.structured !== undefined) r.structured = o.structured;
      return r;
    }
  }
  if (typeof value !== 'object') return { text: String(value) };
  return { text: JSON.stringify(value), structured: value };
}
