import { z } from 'zod';
import { HatcheryError } from '../core/errors.js';

// The schema of a js: tool's arguments, as its module exports it: zod 4 or JSON Schema (js.ts).

/** True for a zod 4 schema (possibly from another copy of zod). */
export function isZod4(v: unknown): v is z.ZodType {
  return !!v && typeof v === 'object' && '_zod' in v && typeof (v as z.ZodType).safeParse === 'function';
}

/** True for a zod 3 schema, which has no JSON Schema conversion here. */
function isZod3(v: unknown): boolean {
  return !!v && typeof v === 'object' && '_def' in v && !('_zod' in v);
}

/** The JSON Schema and validator of a schema export. */
export function compileSchema(
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
  if (isZod3(schema)) {
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
