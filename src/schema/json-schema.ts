import { z } from 'zod';
import { banelingAliases } from './baneling.js';
import { droneAliases } from './drone.js';
import { hatcherySchema } from './hatchery.js';
import { hatcheryAliases } from './names.js';

type JsonObject = Record<string, unknown>;

const ALIAS_TABLES: Record<string, string>[] = [hatcheryAliases, droneAliases, banelingAliases];

/** Adds alias properties, `$`/`_` comment keys and alias-aware `required` to one object schema. */
function decorate(schema: JsonObject): void {
  const props = schema.properties as Record<string, JsonObject> | undefined;
  if (!props || schema.additionalProperties !== false) return;
  schema.patternProperties = { '^[$_]': { description: 'Comments and $schema: ignored' } };
  for (const table of ALIAS_TABLES) {
    const canon = new Set(Object.values(table));
    if (![...canon].every((c) => c in props)) continue;
    for (const [alias, target] of Object.entries(table)) {
      props[alias] = { ...props[target], description: `Alias of "${target}"` };
    }
    const required = (schema.required as string[] | undefined) ?? [];
    const aliased = required.filter((r) => canon.has(r));
    if (aliased.length > 0) {
      schema.required = required.filter((r) => !canon.has(r));
      schema.allOf = aliased.map((r) => ({
        anyOf: [r, ...Object.keys(table).filter((a) => table[a] === r)].map((k) => ({ required: [k] })),
      }));
    }
  }
}

function walk(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(walk);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const obj = node as JsonObject;
  decorate(obj);
  for (const v of Object.values(obj)) walk(v);
}

/** The JSON Schema of hatchery files, generated from the zod schemas (for editors: VS Code, JetBrains). */
export function hatcheryJsonSchema(): JsonObject {
  const schema = z.toJSONSchema(hatcherySchema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
  }) as JsonObject;
  walk(schema);
  return {
    $schema: schema.$schema,
    $id: 'https://github.com/hatchery-mcp/hatchery-mcp/schema/hatchery.schema.json',
    title: 'hatchery-mcp workflow',
    description:
      'A hatchery: a graph of drone (LLM), baneling (tool) and other nodes, served as one MCP tool.',
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema')),
  };
}
