import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import { actualOf, nearest, quote } from '../../schema/suggest.js';
import type { resumeRun } from '../background.js';
import type { ResumeAttempt, ServerHost } from '../host.js';
import type { RegistryEntry } from '../registry.js';
import type { BackgroundRun } from '../runs.js';

/** What a generic tool call can use from its session; the session builds it (session-calls.ts). */
export interface GenericCallContext {
  core: ServerHost;
  /** Aborted when the request is cancelled (hatchery_result stops waiting). */
  signal: AbortSignal;
  /** Runs a hatchery bound to this request, as this session's run (hatchery_run). */
  call: (entry: RegistryEntry, args: Record<string, unknown>) => Promise<CallToolResult>;
  /** Starts a background run (hatchery_start); the session supplies sampling and elicitation. */
  start: (entry: RegistryEntry, args: Record<string, unknown>) => Promise<BackgroundRun>;
  /** The runs this session started, which hatchery_runs lists (unless the server lists all runs). */
  mine: ReadonlySet<string>;
  /** Resumes a journaled run in the background as this session's (hatchery_resume, hatchery_respond). */
  resume: (id: string, attempt: ResumeAttempt, meta: Parameters<typeof resumeRun>[3]) => BackgroundRun;
}

/** A generic tool: its listed definition, and its call. */
export interface GenericTool {
  readonly name: string;
  /** The definition tools/list gives (its JSON Schema built on first read). */
  readonly definition: Tool;
  /** Checks the arguments and runs the tool; a bad argument throws a USAGE error naming it. */
  call(args: Record<string, unknown>, ctx: GenericCallContext): Promise<CallToolResult>;
}

/** How the argument problems zod finds are worded: the name of each type a user reads. */
const TYPE_WORDS: Record<string, string> = {
  string: 'a string (text)',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};

/** Where an issue is, as a user writes it: `run_id`, `inputs[0].name`. */
function where(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/**
 * The words of an argument problem, unless the schema has its own: a missing argument names the key
 * the caller probably misspelt; a wrong one says what it must be and what it was.
 */
function argumentWords(issue: z.core.$ZodRawIssue, args: Record<string, unknown>): string | undefined {
  const at = where(issue.path ?? []);
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined && issue.path?.length === 1) {
        const typo = Object.keys(args).find((k) => nearest(k, [at]) === at);
        const hint = typo === undefined ? '' : `; you passed ${quote(typo)}: did you mean "${at}"?`;
        return `missing argument "${at}"${hint}`;
      }
      const want = TYPE_WORDS[issue.expected] ?? issue.expected;
      return `argument "${at}" must be ${want}, not ${actualOf(issue.input)}`;
    }
    case 'too_small':
      return `"${at}" must be ${issue.inclusive ? 'at least' : 'more than'} ${issue.minimum}, not ${actualOf(issue.input)}`;
    case 'too_big':
      return `"${at}" must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}, not ${actualOf(issue.input)}`;
    case 'invalid_value':
      return `"${at}" must be one of ${issue.values.join(', ')}, not ${actualOf(issue.input)}`;
    default:
      return undefined;
  }
}

/**
 * Declares a generic tool from a zod schema, like the built-in tools (tools/builtin/define.ts).
 * Clients see a closed object (`additionalProperties: false`, optional properties out of `required`,
 * no null types), which strict converters such as OpenAI's Agents SDK take as it is. Calls are
 * kinder: strict clients send null for every unset optional argument, so null means "not given";
 * unknown keys are ignored, or passed on when the schema is loose (a hatchery's own arguments).
 */
export function defineGenericTool<S extends z.ZodObject>(spec: {
  name: string;
  description: string;
  annotations: ToolAnnotations;
  schema: S;
  run: (args: z.infer<S>, ctx: GenericCallContext) => Promise<CallToolResult> | CallToolResult;
}): GenericTool {
  // Built on first read: answering tools/list is the only reader.
  let definition: Tool | undefined;
  return {
    name: spec.name,
    get definition() {
      if (!definition) {
        // Output mode closes nested objects too; the JSON Schema of a loose schema is closed here.
        const inputSchema = z.toJSONSchema(spec.schema.strict(), { io: 'output' }) as Tool['inputSchema'];
        delete (inputSchema as { $schema?: string }).$schema;
        definition = {
          name: spec.name,
          description: spec.description,
          inputSchema,
          annotations: spec.annotations,
        };
      }
      return definition;
    },
    async call(raw, ctx) {
      // No prototype: a "__proto__" argument stays a key instead of a prototype.
      const args: Record<string, unknown> = Object.create(null);
      for (const [k, v] of Object.entries(raw)) if (v !== null) args[k] = v;
      const parsed = spec.schema.safeParse(args, { error: (issue) => argumentWords(issue, args) });
      if (!parsed.success) throw new HatcheryError('USAGE', parsed.error.issues[0]!.message);
      return spec.run(parsed.data, ctx);
    },
  };
}
