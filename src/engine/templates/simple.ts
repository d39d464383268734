import { templateEnv } from './env.js';
import { memberLookup, renderState, runtime } from './sandbox.js';

/**
 * Templates of text and simple tags: `{{ }}` holding a lookup (`name.key[0]["k"]`) followed by
 * filters with literal arguments (`| default("x")`, `| dump`, `| upper`) or by arithmetic with an
 * integer (`{{ ctx.index + 1 }}`), and `{% if %}` on a lookup with filters, with its `{% else %}`
 * and `{% endif %}`. Every such template parses in nunjucks, so the
 * load skips its parse (Template) and the analysis reads its variables from the text
 * (loader/analysis/template-refs.ts): most prompts are of this kind, and nunjucks' parser was the
 * largest part of loading a file. Anything else is parsed at load as before.
 *
 * The templates almost every prompt is made of, text and bare `{{ name.field[0] }}` lookups, also
 * render here (renderPlan): nunjucks builds a Context (a copy of the variables), a Frame and a
 * callback per render; such a template is instead read once into a plan (text and lookups) that one
 * shared loop renders, through the same sandboxed lookups the compiled code calls. Anything else, or
 * a value the loop does not print itself (an object, null, undefined, a denied lookup), goes to
 * nunjucks, which gives the same text or the same error it always did.
 */

/** One expression of a `{{ }}` tag or an `{% if %}`: the looked-up variable, its keys and filters. */
export interface SimpleTag {
  readonly name: string;
  readonly keys: readonly (string | number)[];
  /** Offset of the name in the template. */
  readonly at: number;
  readonly filters: readonly string[];
  /** True for the condition of an `{% if %}`. */
  readonly cond: boolean;
  /** True for `{{ lookup + 1 }}`. */
  readonly math: boolean;
  /** The conditions of the `{% if %}` blocks around it, outermost first. */
  readonly guards: readonly SimpleTag[];
}

/** Words nunjucks reads as literals or operators, never as a name. */
const RESERVED = new Set(['true', 'false', 'none', 'null', 'and', 'or', 'not', 'in', 'is', 'if', 'else']);
const WS = '[ \\t\\r\\n]*';
const NAME = '[A-Za-z_][A-Za-z0-9_]*';
const STEP = `(?:\\.${NAME}|\\[[0-9]+\\]|\\["[^"\\\\\\n]*"\\]|\\['[^'\\\\\\n]*'\\])`;
const LITERAL = `(?:"[^"\\\\\\n]*"|'[^'\\\\\\n]*'|[0-9]+)`;
const FILTER = `\\|${WS}${NAME}${WS}(?:\\(${WS}${LITERAL}(?:${WS},${WS}${LITERAL})*${WS}\\)${WS})?`;
const EXPR = `(${NAME})(${STEP}*)${WS}((?:${FILTER})*)`;
const OUTPUT = new RegExp(`^(${WS})${EXPR}$`);
/** `{{ ctx.index + 1 }}`: a lookup and an integer (no filters: `| f` would bind to the number). */
const ARITHMETIC = new RegExp(`^(${WS})(${NAME})(${STEP}*)${WS}[-+*/%]${WS}[0-9]+${WS}()$`);
const IF = new RegExp(`^(${WS}if[ \\t\\r\\n]+)${EXPR}$`);
const END = new RegExp(`^${WS}(else|endif)${WS}$`);
const STEPS = /\.([A-Za-z_][A-Za-z0-9_]*)|\[([0-9]+)\]|\["([^"\\\n]*)"\]|\['([^'\\\n]*)'\]/g;
const QUOTED = /"[^"\\\n]*"|'[^'\\\n]*'/g;
const FILTER_NAMES = new RegExp(`\\|${WS}(${NAME})`, 'g');

/** The expression matched by `m` (groups: lead, name, steps, filters), or null when nunjucks would refuse it. */
function expression(
  m: RegExpExecArray,
  start: number,
  cond: boolean,
  guards: readonly SimpleTag[],
  math = false,
): SimpleTag | null {
  const name = m[2]!;
  if (RESERVED.has(name)) return null;
  const keys: (string | number)[] = [];
  for (const s of m[3]!.matchAll(STEPS)) {
    // After a dot nunjucks wants a name: `x.true` does not parse.
    if (s[1] !== undefined) {
      if (RESERVED.has(s[1])) return null;
      keys.push(s[1]);
    } else if (s[2] !== undefined) keys.push(Number.parseInt(s[2], 10));
    else keys.push(s[3] ?? s[4]!);
  }
  const filters: string[] = [];
  // Names only: a `|` inside a string argument is no filter.
  for (const f of m[4]!.replace(QUOTED, '""').matchAll(FILTER_NAMES)) {
    if (RESERVED.has(f[1]!)) return null;
    filters.push(f[1]!);
  }
  return { name, keys, at: start + m[1]!.length, filters, cond, math, guards };
}

/** The expressions of `source` when it is text and simple tags only, else null (nunjucks parses it). */
export function simpleTags(source: string): SimpleTag[] | null {
  const tags: SimpleTag[] = [];
  // Open `{% if %}` blocks: their condition, and whether their `{% else %}` was seen.
  const blocks: { cond: SimpleTag; inElse: boolean }[] = [];
  let guards: readonly SimpleTag[] = [];
  let at = 0;
  for (;;) {
    const output = source.indexOf('{{', at);
    const statement = source.indexOf('{%', at);
    const open = output < 0 ? statement : statement < 0 ? output : Math.min(output, statement);
    const text = source.slice(at, open < 0 ? undefined : open);
    // Comments and a stray `#}` (a syntax error) are nunjucks' business.
    if (text.includes('{#') || text.includes('#}')) return null;
    if (open < 0) return blocks.length === 0 ? tags : null;
    const isOutput = open === output;
    const close = source.indexOf(isOutput ? '}}' : '%}', open + 2);
    if (close < 0) return null;
    const inner = source.slice(open + 2, close);
    at = close + 2;
    if (isOutput) {
      const lookup = OUTPUT.exec(inner);
      const m = lookup ?? ARITHMETIC.exec(inner);
      const tag = m && expression(m, open + 2, false, guards, lookup === null);
      if (!tag) return null;
      tags.push(tag);
      continue;
    }
    const m = IF.exec(inner);
    if (m) {
      const cond = expression(m, open + 2, true, guards);
      if (!cond) return null;
      tags.push(cond);
      blocks.push({ cond, inElse: false });
      guards = [...guards, cond];
      continue;
    }
    const end = END.exec(inner);
    const block = blocks[blocks.length - 1];
    if (!end || !block) return null;
    if (end[1] === 'else') {
      if (block.inElse) return null;
      block.inElse = true;
    } else {
      blocks.pop();
      guards = guards.slice(0, -1);
    }
  }
}

/** Text parts (strings) and bare lookups, in template order. */
export type Plan = readonly (string | SimpleTag)[];

/** The plan of `source` (its simple `tags`), or null when it holds anything but text and bare lookups. */
export function planOf(source: string, tags = simpleTags(source)): Plan | null {
  if (tags === null) return null;
  const parts: (string | SimpleTag)[] = [];
  let at = 0;
  for (const tag of tags) {
    if (tag.cond || tag.math || tag.filters.length > 0) return null;
    // Only blanks stand between a bare lookup and its braces, and the tag holds no `}}`.
    const open = source.lastIndexOf('{{', tag.at);
    if (open > at) parts.push(source.slice(at, open));
    parts.push(tag);
    at = source.indexOf('}}', tag.at) + 2;
  }
  if (at < source.length) parts.push(source.slice(at));
  return parts;
}

/** What `{{ x }}` looks names up in: the render's variables, then the environment's globals. */
const NO_VARS: Record<string, unknown> = Object.freeze(Object.create(null));
const lookupContext = {
  ctx: NO_VARS,
  env: templateEnv as unknown as { globals: Record<string, unknown> },
};
/** The top-level frame of a render holds no variables: names go to the context. */
const topFrame = { lookup: (_name: string): unknown => undefined };

/**
 * Renders a plan with `vars`, every lookup through the sandbox's own functions; undefined when it
 * cannot give nunjucks' text itself (the caller renders with nunjucks then). Never throws.
 */
export function renderPlan(
  plan: Plan,
  vars: { ctx: unknown; out: unknown; fread: unknown },
): string | undefined {
  const state = renderState;
  state.fread = vars.fread;
  state.ctx = vars.ctx;
  state.out = vars.out;
  lookupContext.ctx = vars as Record<string, unknown>;
  try {
    let output = '';
    for (const part of plan) {
      if (typeof part === 'string') {
        output += part;
        continue;
      }
      let v = runtime.contextOrFrameLookup(lookupContext, topFrame, part.name);
      for (const key of part.keys) v = memberLookup(v, key);
      const t = typeof v;
      // What nunjucks' `output +=` gives for these; objects print as JSON, null/undefined fail there.
      if (t === 'string' || t === 'number' || t === 'boolean') output += v as string;
      else return undefined;
    }
    return output;
  } catch {
    // A denied lookup: nunjucks renders again and reports it as it always has.
    return undefined;
  } finally {
    state.fread = state.ctx = state.out = state.pending = undefined;
    lookupContext.ctx = NO_VARS;
  }
}
