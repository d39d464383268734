/**
 * Templates of text and simple `{{ }}` tags: a lookup (`name.key[0]["k"]`) followed by filters with
 * literal arguments (`| default("x")`, `| dump`, `| upper`). Every such template parses in nunjucks,
 * so the load skips its parse (Template) and the analysis reads its variables from the text
 * (loader/analysis/template-refs.ts): most prompts are of this kind, and nunjucks' parser was the
 * largest part of loading a file. Anything else is parsed at load as before.
 */

/** One `{{ }}` tag: the looked-up variable, its keys, where the name starts, and its filters. */
export interface SimpleTag {
  readonly name: string;
  readonly keys: readonly (string | number)[];
  /** Offset of the name in the template. */
  readonly at: number;
  readonly filters: readonly string[];
}

/** Words nunjucks reads as literals or operators, never as a name. */
const RESERVED = new Set(['true', 'false', 'none', 'null', 'and', 'or', 'not', 'in', 'is', 'if', 'else']);
const WS = '[ \\t\\r\\n]*';
const NAME = '[A-Za-z_][A-Za-z0-9_]*';
const STEP = `(?:\\.${NAME}|\\[[0-9]+\\]|\\["[^"\\\\\\n]*"\\]|\\['[^'\\\\\\n]*'\\])`;
const LITERAL = `(?:"[^"\\\\\\n]*"|'[^'\\\\\\n]*'|[0-9]+)`;
const FILTER = `\\|${WS}${NAME}${WS}(?:\\(${WS}${LITERAL}(?:${WS},${WS}${LITERAL})*${WS}\\)${WS})?`;
const TAG = new RegExp(`^(${WS})(${NAME})(${STEP}*)${WS}((?:${FILTER})*)$`);
const STEPS = /\.([A-Za-z_][A-Za-z0-9_]*)|\[([0-9]+)\]|\["([^"\\\n]*)"\]|\['([^'\\\n]*)'\]/g;
const QUOTED = /"[^"\\\n]*"|'[^'\\\n]*'/g;
const FILTER_NAMES = new RegExp(`\\|${WS}(${NAME})`, 'g');

/** The tags of `source` when it is text and simple tags only, else null (nunjucks parses it). */
export function simpleTags(source: string): SimpleTag[] | null {
  const tags: SimpleTag[] = [];
  let at = 0;
  for (;;) {
    const open = source.indexOf('{{', at);
    const text = source.slice(at, open < 0 ? undefined : open);
    // Other tags, comments and a stray `#}` (a syntax error) are nunjucks' business.
    if (text.includes('{%') || text.includes('{#') || text.includes('#}')) return null;
    if (open < 0) return tags;
    const close = source.indexOf('}}', open + 2);
    if (close < 0) return null;
    const m = TAG.exec(source.slice(open + 2, close));
    if (!m) return null;
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
    tags.push({ name, keys, at: open + 2 + m[1]!.length, filters });
    at = close + 2;
  }
}
