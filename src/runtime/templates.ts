import nunjucks from 'nunjucks';
import { type ErrorContext, HatcheryError } from '../errors.js';

/** What every template sees: the run's ctx, node outputs by name, and `fread`. */
export interface TemplateVars {
  ctx: Record<string, unknown>;
  out: Record<string, unknown>;
  fread: (path: string) => string;
  [extra: string]: unknown;
}

// Rendering is synchronous, so one slot is enough to carry a helper's typed error
// (e.g. fread's PATH_DENIED) past nunjucks, which would otherwise flatten it into a string.
let pendingError: unknown;

/** Throws `err` from inside a template helper so that `render` rethrows it unchanged. */
export function raiseInTemplate(err: unknown): never {
  pendingError = err;
  throw err;
}

// Keys that lead from any value to the Function constructor or the prototype chain;
// a template reaching them could run arbitrary code, so looking them up is an error.
const BLOCKED_KEYS = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'caller',
  'callee',
  'arguments',
]);

type Runtime = {
  memberLookup: (obj: unknown, key: unknown) => unknown;
  suppressValue: (val: unknown, autoescape: boolean) => unknown;
  SafeString: new (s: string) => unknown;
};
const runtime = (nunjucks as unknown as { runtime: Runtime }).runtime;
const originalSuppress = runtime.suppressValue;

// Patched once for the nunjucks copy this package owns. memberLookup is what compiled templates
// call for `a.b` and `a["b"]`; suppressValue is what prints `{{ x }}`.
runtime.memberLookup = function safeMemberLookup(obj: unknown, key: unknown): unknown {
  if (obj === undefined || obj === null) return undefined;
  if (typeof key === 'string' && BLOCKED_KEYS.has(key)) {
    raiseInTemplate(
      new HatcheryError(
        'TEMPLATE',
        `"${key}" cannot be accessed in templates (it would reach JavaScript internals)`,
        {
          variable: key,
        },
      ),
    );
  }
  const target = obj as Record<string, unknown>;
  const val = target[key as string];
  if (typeof val === 'function')
    return (...args: unknown[]) => (val as (...a: unknown[]) => unknown).apply(obj, args);
  return val;
};
runtime.suppressValue = function jsonAwareSuppress(val: unknown, autoescape: boolean): unknown {
  // Objects and arrays print as JSON, not "[object Object]": structured outputs stay readable in prompts.
  if (val !== null && typeof val === 'object' && !(val instanceof runtime.SafeString)) {
    return originalSuppress(JSON.stringify(val), autoescape);
  }
  return originalSuppress(val, autoescape);
};

/** The one shared environment: autoescape off (prompts are not HTML), undefined output is an error. */
export const templateEnv = new nunjucks.Environment(null, { autoescape: false, throwOnUndefined: true });

const TAG = /\{\{|\{%|\{#/;

/** A template compiled once at load time; `render` is cheap and never re-parses. */
export class Template {
  readonly source: string;
  readonly where: ErrorContext;
  private readonly compiled: nunjucks.Template | undefined;

  constructor(source: string, where: ErrorContext) {
    this.source = source;
    this.where = where;
    // Text without any tag is returned as is; this skips nunjucks entirely for constant prompts.
    if (!TAG.test(source)) {
      this.compiled = undefined;
      return;
    }
    try {
      this.compiled = new nunjucks.Template(source, templateEnv, where.field ?? 'template', true);
    } catch (err) {
      throw new HatcheryError('TEMPLATE', `template syntax error: ${cleanMessage(err)}`, where, {
        cause: err,
      });
    }
  }

  /** True when the template has no tags and always renders to its source. */
  get isConstant(): boolean {
    return this.compiled === undefined;
  }

  /** Renders with the given variables; errors name the node, the field and the variable. */
  render(vars: TemplateVars): string {
    if (this.compiled === undefined) return this.source;
    pendingError = undefined;
    try {
      return this.compiled.render(vars);
    } catch (err) {
      const own = pendingError;
      if (own !== undefined) {
        pendingError = undefined;
        if (own instanceof HatcheryError) {
          for (const [k, v] of Object.entries(this.where))
            if (own.context[k] === undefined) own.context[k] = v;
          throw own;
        }
      }
      throw this.translate(err);
    }
  }

  private translate(err: unknown): HatcheryError {
    const msg = err instanceof Error ? err.message : String(err);
    const pos = /\[Line (\d+), Column (\d+)\]/.exec(msg);
    if (msg.includes('attempted to output null or undefined value') && pos) {
      const expr = expressionAt(this.source, Number(pos[1]), Number(pos[2]));
      return new HatcheryError(
        'UNDEFINED_VARIABLE',
        `undefined variable \`${expr}\` (line ${pos[1]}). Define it (declared input, files entry, save_output of an earlier node) or give a default: {{ ${expr} | default("") }}`,
        { ...this.where, variable: expr },
        { cause: err },
      );
    }
    return new HatcheryError('TEMPLATE', `template error: ${cleanMessage(err)}`, this.where, { cause: err });
  }
}

function cleanMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg
    .replace(/^\([^)]*\)\s*/, '')
    .replace(/^\s*Error:\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The expression of the `{{ ... }}` tag that starts at the given 1-based line and column. */
function expressionAt(source: string, line: number, column: number): string {
  const text = source.split('\n')[line - 1] ?? '';
  const start = text.lastIndexOf('{{', Math.max(0, column - 1) + 1);
  const from = start >= 0 ? start : column - 1;
  const rest = source
    .split('\n')
    .slice(line - 1)
    .join('\n')
    .slice(from + 2);
  const end = rest.indexOf('}}');
  const expr = (end >= 0 ? rest.slice(0, end) : rest).trim();
  return expr.replace(/^-\s*|\s*-$/g, '') || '?';
}
