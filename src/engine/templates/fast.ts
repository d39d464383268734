import { templateEnv } from './env.js';
import { memberLookup, renderState, runtime } from './sandbox.js';

/**
 * The fast path of the templates almost every prompt is made of: text and `{{ name.field[0] }}`
 * lookups, nothing else. Nunjucks builds a Context (a copy of the variables), a Frame and a callback
 * per render; such a template is instead read once into a plan (text and lookup paths) that one
 * shared loop renders, through the same sandboxed lookups the compiled code calls. Anything else, or
 * a value the loop does not print itself (an object, null, undefined, a denied lookup), goes to
 * nunjucks, which gives the same text or the same error it always did.
 */

/** One `{{ }}` tag: the variable and the keys looked up on it. */
interface Lookup {
  readonly name: string;
  readonly keys: readonly (string | number)[];
}

/** Text parts (strings) and lookups, in template order. */
export type Plan = readonly (string | Lookup)[];

/** A nunjucks symbol that is a plain name (not a literal like `true`, not an operator word). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(['true', 'false', 'none', 'null', 'and', 'or', 'not', 'in', 'is', 'if', 'else']);
/** `name`, then `.name`, `[123]` or `["text"]` / `['text']` (no escapes), with spaces only around the whole. */
const EXPR =
  /^[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]|\["[^"\\\n]*"\]|\['[^'\\\n]*'\])*)[ \t\r\n]*$/;
const STEP = /\.([A-Za-z_][A-Za-z0-9_]*)|\[([0-9]+)\]|\["([^"\\\n]*)"\]|\['([^'\\\n]*)'\]/g;

/** The plan of `source`, or null when it holds anything but text and plain lookups. */
export function planOf(source: string): Plan | null {
  const parts: (string | Lookup)[] = [];
  let at = 0;
  for (;;) {
    const open = source.indexOf('{{', at);
    const text = source.slice(at, open < 0 ? undefined : open);
    // Other tags, comments and a stray `#}` (a nunjucks syntax error) are nunjucks' business.
    if (text.includes('{%') || text.includes('{#') || text.includes('#}')) return null;
    if (text !== '') parts.push(text);
    if (open < 0) return parts;
    const close = source.indexOf('}}', open + 2);
    if (close < 0) return null;
    const m = EXPR.exec(source.slice(open + 2, close));
    if (!m) return null;
    const lookup = lookupOf(m[1]!, m[2]!);
    if (!lookup) return null;
    parts.push(lookup);
    at = close + 2;
  }
}

function lookupOf(name: string, path: string): Lookup | null {
  if (RESERVED.has(name)) return null;
  const keys: (string | number)[] = [];
  for (const s of path.matchAll(STEP)) {
    if (s[1] !== undefined) {
      // After a dot nunjucks wants a symbol: `x.true` does not parse.
      if (RESERVED.has(s[1]) || !NAME.test(s[1])) return null;
      keys.push(s[1]);
    } else if (s[2] !== undefined) keys.push(Number.parseInt(s[2], 10));
    else keys.push(s[3] ?? s[4]!);
  }
  return { name, keys };
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
