/**
 * Templates of text and simple tags: `{{ }}` holding a lookup (`name.key[0]["k"]`) followed by
 * filters with literal arguments (`| default("x")`, `| dump`, `| upper`) or by arithmetic with an
 * integer (`{{ ctx.index + 1 }}`), and `{% if %}` on a lookup with filters, with its `{% else %}`
 * and `{% endif %}`. Every such template parses in nunjucks, so the
 * load skips its parse (Template) and the analysis reads its variables from the text
 * (loader/analysis/template-refs.ts): most prompts are of this kind, and nunjucks' parser was the
 * largest part of loading a file. Anything else is parsed at load as before.
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
  return { name, keys, at: start + m[1]!.length, filters, cond, guards };
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
      const m = OUTPUT.exec(inner) ?? ARITHMETIC.exec(inner);
      const tag = m && expression(m, open + 2, false, guards);
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
