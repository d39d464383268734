import type { ValidationProblem } from '../core/errors.js';

/** Characters of the file shown on each side of a syntax error. */
const EXCERPT_SIDE = 40;

/** Parses JSON text; a syntax error becomes a problem with line, column and a short excerpt. */
export function parseJson(text: string): { value?: unknown; problem?: ValidationProblem } {
  if (text.trim() === '')
    return { problem: { path: '', message: 'the file is empty (expected a JSON object)' } };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const m = /position (\d+)/.exec(msg);
    // V8 names the position of some errors only; the others are found by scanning for the first error.
    const pos = m ? Number(m[1]) : syntaxErrorOffset(text);
    // V8 may quote the source ("..." is not valid JSON): only our own short excerpt is shown.
    const reason = msg
      .replace(/\s*in JSON at position \d+.*$/s, '')
      .replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
      .replace(/^JSON\.parse: /, '')
      .slice(0, 120);
    return { problem: syntaxProblem('JSON', text, pos, reason) };
  }
  const dup = duplicateJsonKey(text);
  if (dup)
    return {
      problem: syntaxProblem(
        'JSON',
        text,
        dup.offset,
        `duplicate key ${JSON.stringify(dup.key.length > 60 ? `${dup.key.slice(0, 60)}…` : dup.key)}: a key may appear once per object; keep one`,
      ),
    };
  return { value };
}

/**
 * A syntax error at an offset of the text: line and column as fields, and the message
 * `invalid <lang> (near "…excerpt…"): reason`, so formatProblem shows the position once.
 */
export function syntaxProblem(lang: string, text: string, pos: number, reason: string): ValidationProblem {
  if (pos < 0 || pos > text.length) return { path: '', message: `invalid ${lang}: ${reason}` };
  const at = where(text, pos);
  return { path: '', message: `invalid ${lang}${at.near}: ${reason}`, line: at.line, column: at.column };
}

/** Line, column and ` (near "…excerpt…")` of an offset in the text. */
function where(text: string, pos: number): { line: number; column: number; near: string } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  let lineEnd = text.indexOf('\n', pos);
  if (lineEnd === -1) lineEnd = text.length;
  const from = Math.max(lineStart, pos - EXCERPT_SIDE);
  const to = Math.min(lineEnd, pos + EXCERPT_SIDE);
  const excerpt = `${from > lineStart ? '…' : ''}${text.slice(from, to)}${to < lineEnd ? '…' : ''}`;
  const near = excerpt.trim() === '' ? ' (at the end of the file)' : ` (near ${JSON.stringify(excerpt)})`;
  return {
    line,
    column: pos - lineStart + 1,
    near: pos >= text.length ? ' (at the end of the file)' : near,
  };
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERAL = /true|false|null/y;
const HEX4 = /[0-9a-fA-F]{4}/y;

/** Offset of the first JSON syntax error, found without recursion (nesting may be any depth). */
function syntaxErrorOffset(text: string): number {
  const n = text.length;
  const stack: number[] = []; // 123 "{" or 91 "["
  let i = 0;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      i++;
    }
  };
  /** Scans a string starting at i (a quote); false at the offending character. */
  const str = (): boolean => {
    if (text.charCodeAt(i) !== 34) return false;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return true;
      }
      if (c < 32) return false;
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          HEX4.lastIndex = i + 2;
          if (!HEX4.test(text)) return false;
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return false;
      } else i++;
    }
    return false;
  };
  const sticky = (re: RegExp): boolean => {
    re.lastIndex = i;
    if (!re.test(text)) return false;
    i = re.lastIndex;
    return true;
  };
  let state: 'value' | 'key' | 'after' = 'value';
  for (;;) {
    ws();
    if (state === 'value') {
      const c = text.charCodeAt(i);
      if (c === 123 || c === 91) {
        stack.push(c);
        i++;
        ws();
        if (text.charCodeAt(i) === (c === 123 ? 125 : 93)) {
          stack.pop();
          i++;
          state = 'after';
        } else state = c === 123 ? 'key' : 'value';
      } else if (c === 34) {
        if (!str()) return i;
        state = 'after';
      } else if (sticky(NUMBER) || sticky(LITERAL)) state = 'after';
      else return i;
    } else if (state === 'key') {
      if (!str()) return i;
      ws();
      if (text.charCodeAt(i) !== 58) return i;
      i++;
      state = 'value';
    } else {
      const top = stack[stack.length - 1];
      if (top === undefined) return i < n ? i : -1;
      const c = text.charCodeAt(i);
      if (c === 44) {
        i++;
        state = top === 123 ? 'key' : 'value';
      } else if (c === (top === 123 ? 125 : 93)) {
        stack.pop();
        i++;
      } else return i;
    }
  }
}

const STRUCTURE = /["{}[\],]/g;

/**
 * The first key written twice in one object of valid JSON text (JSON.parse keeps the last silently),
 * with the offset of its second occurrence. One pass that jumps from one structural character to the next.
 */
export function duplicateJsonKey(text: string): { key: string; offset: number } | undefined {
  // One key set per open object; null for an open array.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  STRUCTURE.lastIndex = 0;
  for (let m = STRUCTURE.exec(text); m; m = STRUCTURE.exec(text)) {
    const i = m.index;
    const c = text.charCodeAt(i);
    if (c === 34) {
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 92) slashes++;
        if (slashes % 2 === 0 || end === -1) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return undefined;
      STRUCTURE.lastIndex = end + 1;
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.has(key)) return { key, offset: i };
        top.add(key);
        expectKey = false;
      }
    } else if (c === 123) {
      stack.push(new Set());
      expectKey = true;
    } else if (c === 91) {
      stack.push(null);
      expectKey = false;
    } else if (c === 125 || c === 93) stack.pop();
    else expectKey = stack[stack.length - 1] != null;
  }
  return undefined;
}
