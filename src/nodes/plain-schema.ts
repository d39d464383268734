import { z } from 'zod';

/**
 * Most output_schemas are plain JSON Schema: types, properties, required, items, enums, bounds.
 * zod converts every such schema, so its validator can wait for the first reply it checks: building
 * it at load was about a tenth of loading a file with one, at every server start. Anything else
 * (refs, combinators, formats, patterns, unknown keys, odd values) is still converted at load, where
 * a conversion failure is a load problem.
 */

const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const NUMBERS = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);
const TEXTS = new Set(['description', 'title']);
/** Deepest schema nesting looked at; deeper schemas are converted at load. */
const MAX_DEPTH = 32;

function isRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** True when `schema` uses only the plain subset above (which zod's fromJSONSchema always converts). */
export function isPlainJsonSchema(schema: unknown, depth = 0): boolean {
  if (!isRecord(schema) || depth > MAX_DEPTH) return false;
  for (const key of Object.keys(schema)) {
    const v = schema[key];
    if (key === 'type') {
      if (typeof v !== 'string' || !TYPES.has(v)) return false;
    } else if (key === 'properties') {
      if (!isRecord(v)) return false;
      for (const name of Object.keys(v)) if (!isPlainJsonSchema(v[name], depth + 1)) return false;
    } else if (key === 'items') {
      if (!isPlainJsonSchema(v, depth + 1)) return false;
    } else if (key === 'additionalProperties') {
      if (typeof v !== 'boolean' && !isPlainJsonSchema(v, depth + 1)) return false;
    } else if (key === 'required') {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return false;
    } else if (key === 'enum') {
      if (!Array.isArray(v) || v.length === 0) return false;
      if (!v.every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x))) return false;
    } else if (NUMBERS.has(key)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) return false;
    } else if (TEXTS.has(key)) {
      if (typeof v !== 'string') return false;
    } else return false;
  }
  return true;
}

/** A drone's output_schema: the JSON Schema sent to the provider and the validator built from it. */
export interface OutputSchema {
  json: Record<string, unknown>;
  validator: z.ZodType;
}

/** The zod validator of a JSON Schema; throws with zod's message when the schema is unusable. */
export function jsonSchemaValidator(schema: Record<string, unknown>): z.ZodType {
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
}

/** An output schema whose zod validator is built on its first use (see isPlainJsonSchema). */
export function lazyOutputSchema(json: Record<string, unknown>): OutputSchema {
  let validator: z.ZodType | undefined;
  return {
    json,
    get validator(): z.ZodType {
      validator ??= jsonSchemaValidator(json);
      return validator;
    },
  };
}
