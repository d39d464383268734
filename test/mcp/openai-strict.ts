/**
 * OpenAI's strict-mode rules for tool input schemas, for tests: what the API accepts with
 * `strict: true` (Structured Outputs, "Supported schemas"), and what the OpenAI Agents SDK does with
 * an MCP tool's schema under `convertSchemasToStrict` (ported from openai/openai-agents-js
 * packages/agents-core/src/mcp.ts mcpToFunctionTool and utils/strictToolSchema.ts at 6d0c61a:
 * assertOpenAIStrictToolSchemaPreservesOpenObjects, then the strict preparation). The SDK logs
 * "Error converting MCP schema to strict mode" and falls back to a non-strict tool for every
 * schema whose conversion throws.
 */

type Schema = Record<string, unknown>;

const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords the API accepts in strict mode. */
const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);
/** Most levels of nesting the API accepts. */
const MAX_DEPTH = 10;

/** Every way `schema` breaks the API's strict-mode rules, as "path: problem" lines (none: it is strict). */
export function strictProblems(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isRecord(schema) || schema.type !== 'object')
    problems.push('(root): must be {"type": "object"}, not anyOf');
  let enumValues = 0;
  const visit = (s: unknown, at: string, depth: number): void => {
    if (!isRecord(s)) {
      problems.push(`${at}: a schema must be an object`);
      return;
    }
    if (depth > MAX_DEPTH) problems.push(`${at}: nested deeper than ${MAX_DEPTH} levels`);
    for (const k of Object.keys(s))
      if (!STRICT_KEYWORDS.has(k)) problems.push(`${at}: keyword "${k}" is not supported`);
    const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
    for (const t of types)
      if (!TYPES.has(String(t))) problems.push(`${at}: type ${JSON.stringify(t)} is not supported`);
    if (
      s.type === undefined &&
      s.anyOf === undefined &&
      s.$ref === undefined &&
      s.enum === undefined &&
      s.const === undefined
    )
      problems.push(`${at}: no type (an empty schema accepts anything)`);
    if (typeof s.format === 'string' && !FORMATS.has(s.format))
      problems.push(`${at}: format "${s.format}" is not supported`);
    if (Array.isArray(s.enum)) enumValues += s.enum.length;
    if (types.includes('object') || isRecord(s.properties)) {
      if (s.additionalProperties !== false)
        problems.push(`${at}: an object needs "additionalProperties": false`);
      if (!isRecord(s.properties)) problems.push(`${at}: an object needs "properties"`);
      else {
        const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
        for (const [k, p] of Object.entries(s.properties)) {
          if (!required.has(k))
            problems.push(`${at}.${k}: every property must be required (optional: a union with null)`);
          visit(p, `${at}.${k}`, depth + 1);
        }
      }
    }
    if (s.items !== undefined) visit(s.items, `${at}[]`, depth + 1);
    if (s.anyOf !== undefined) {
      if (!Array.isArray(s.anyOf) || s.anyOf.length === 0)
        problems.push(`${at}: anyOf must be a non-empty list`);
      else for (const [i, b] of s.anyOf.entries()) visit(b, `${at}.anyOf[${i}]`, depth + 1);
    }
    for (const key of ['$defs', 'definitions'])
      if (isRecord(s[key]))
        for (const [k, d] of Object.entries(s[key] as Schema)) visit(d, `${at}.${key}.${k}`, depth);
  };
  if (isRecord(schema)) visit(schema, '(root)', 0);
  if (enumValues > 1000) problems.push(`(root): ${enumValues} enum values, over 1000`);
  return problems;
}

/** Keywords the Agents SDK refuses to convert (unsupportedStrictNormalizationKeywords). */
const SDK_UNSUPPORTED = [
  '$dynamicRef',
  '$recursiveRef',
  'additionalItems',
  'allOf',
  'contains',
  'contentSchema',
  'dependencies',
  'dependentRequired',
  'dependentSchemas',
  'else',
  'if',
  'maxContains',
  'minContains',
  'not',
  'oneOf',
  'patternProperties',
  'prefixItems',
  'propertyNames',
  'then',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const METADATA = new Set([
  '$comment',
  '$defs',
  'default',
  'deprecated',
  'description',
  'definitions',
  'examples',
  'readOnly',
  'title',
  'writeOnly',
]);

type Nullability = 'allows' | 'disallows' | 'unknown';

function nullability(s: unknown): Nullability {
  if (s === true) return 'allows';
  if (s === false || !isRecord(s)) return s === false ? 'disallows' : 'unknown';
  if ('type' in s) {
    if (typeof s.type !== 'string' && !Array.isArray(s.type)) return 'unknown';
    if (s.type !== 'null' && !(Array.isArray(s.type) && s.type.includes('null'))) return 'disallows';
  }
  if ('enum' in s && Array.isArray(s.enum) && !s.enum.includes(null)) return 'disallows';
  if ('const' in s && s.const !== null) return 'disallows';
  if (Array.isArray(s.anyOf)) {
    const all = s.anyOf.map(nullability);
    if (all.includes('allows')) return 'allows';
    return all.every((n) => n === 'disallows') ? 'disallows' : 'unknown';
  }
  if (!('type' in s) && isRecord(s.properties)) return 'disallows';
  return 'allows';
}

/**
 * What the Agents SDK makes of an MCP tool's input schema with `convertSchemasToStrict`: the strict
 * schema it sends, or the error it logs before falling back to a non-strict tool. ($ref is not
 * followed: no schema of this server uses it.)
 */
export function agentsSdkStrict(input: Schema | undefined): { schema?: Schema; error?: string } {
  const inputSchema = input ?? {};
  let schema: Schema = {
    ...inputSchema,
    type: inputSchema.type ?? 'object',
    properties: inputSchema.properties ?? {},
    required: inputSchema.required ?? [],
  };
  if (Object.keys(inputSchema).length === 0) schema = { ...schema, additionalProperties: false };
  const check = (s: unknown, at: string): string | undefined => {
    if (typeof s === 'boolean') return undefined;
    if (!isRecord(s)) return `${at}: a non-object schema node`;
    for (const k of SDK_UNSUPPORTED) if (k in s) return `${at}: unsupported keyword \`${k}\``;
    if ('anyOf' in s) {
      if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) return `${at}: invalid anyOf`;
      const sibling = Object.keys(s).find((k) => k !== 'anyOf' && !METADATA.has(k));
      if (sibling) return `${at}: anyOf combined with sibling keyword \`${sibling}\``;
      for (const [i, b] of s.anyOf.entries()) {
        const e = check(b, `${at}.anyOf[${i}]`);
        if (e) return e;
      }
    }
    const props = isRecord(s.properties) ? s.properties : undefined;
    const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'));
    const declared = props !== undefined && Object.keys(props).length > 0;
    if (isObject && s.additionalProperties !== false && (!declared || 'additionalProperties' in s))
      return `${at}: Cannot convert an open JSON schema object to strict mode without changing its accepted values`;
    if (props) {
      const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
      for (const [k, p] of Object.entries(props)) {
        const e = check(p, `${at}.${k}`);
        if (e) return e;
        if (!required.has(k) && nullability(p) === 'unknown')
          return `${at}.${k}: nullability of an optional property unknown`;
      }
    }
    if (s.items !== undefined) return check(s.items, `${at}[]`);
    return undefined;
  };
  const error = check(schema, '(root)');
  if (error) return { error };
  // The preparation: optional properties become required and nullable, objects closed.
  const prepare = (s: unknown): unknown => {
    if (!isRecord(s)) return s;
    const out: Schema = { ...s };
    const props = isRecord(out.properties) ? out.properties : undefined;
    if (
      props &&
      (out.type === undefined ||
        out.type === 'object' ||
        (Array.isArray(out.type) && out.type.includes('object')))
    ) {
      const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
      const next: Schema = {};
      for (const [k, p] of Object.entries(props)) {
        const prepared = prepare(p);
        next[k] =
          !required.has(k) && nullability(p) === 'disallows' && isRecord(prepared)
            ? {
                ...(typeof prepared.description === 'string' ? { description: prepared.description } : {}),
                anyOf: [prepared, { type: 'null' }],
              }
            : prepared;
      }
      out.properties = next;
      out.required = Object.keys(next);
      out.additionalProperties = false;
    }
    if (Array.isArray(out.anyOf)) out.anyOf = out.anyOf.map(prepare);
    if (out.items !== undefined) out.items = prepare(out.items);
    if (out.default === null) delete out.default;
    return out;
  };
  return { schema: prepare(schema) as Schema };
}
