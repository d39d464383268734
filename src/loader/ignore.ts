import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Name of the file whose patterns keep paths of a served or validated folder out of it. */
export const IGNORE_FILE = '.hatcheryignore';

interface Rule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

/** The body of a character class `[...]` starting at `i` (after "["): its regex text and end. */
function charClass(p: string, i: number): { text: string; end: number } | undefined {
  let j = i;
  let body = '';
  if (p[j] === '!' || p[j] === '^') {
    body = '^';
    j++;
  }
  if (p[j] === ']') {
    body += '\\]';
    j++;
  }
  for (; j < p.length && p[j] !== ']'; j++) {
    const c = p[j]!;
    if (c === '\\' && j + 1 < p.length) body += `\\${p[++j]}`;
    else if (c === '/') return undefined;
    else body += c === '^' || c === '[' ? `\\${c}` : c;
  }
  return j < p.length ? { text: `[${body}]`, end: j } : undefined;
}

/** A gitignore pattern (without "!" and trailing "/") as a regex over slash-separated relative paths. */
function patternRegex(pattern: string): RegExp {
  // A slash at the start or in the middle anchors the pattern at the folder of the ignore file.
  const anchored = pattern.includes('/');
  const p = pattern.startsWith('/') ? pattern.slice(1) : pattern;
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*' && p[i + 1] === '*') {
      const atStart = i === 0 || p[i - 1] === '/';
      const atEnd = i + 2 === p.length || p[i + 2] === '/';
      if (atStart && atEnd) {
        if (i + 2 === p.length) re += '.*';
        else {
          // "**/" matches zero or more whole folders.
          re += '(?:[^/]+/)*';
          i++;
        }
        i++;
        continue;
      }
      // Any other "**" is an ordinary "*".
      while (p[i + 1] === '*') i++;
      re += '[^/]*';
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const cls = charClass(p, i + 1);
      if (cls) {
        re += cls.text;
        i = cls.end;
      } else re += '\\[';
    } else if (c === '\\' && i + 1 < p.length) re += escapeChar(p[++i]!);
    else re += escapeChar(c);
  }
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${re}$`);
}

function escapeChar(c: string): string {
  return /[.*+?^${}()|[\]\\/-]/.test(c) ? `\\${c}` : c;
}

/**
 * The patterns of one ignore file, in gitignore syntax: globs (`*`, `?`, `[a-z]`), `**` for any
 * number of folders, `!` to take a path back, a trailing `/` for folders only, `#` comments, `\`
 * escapes. The last pattern that matches a path decides; a path inside an ignored folder stays
 * ignored (as in git, a `!` pattern cannot take it back).
 */
export class IgnoreRules {
  private readonly rules: Rule[] = [];

  constructor(text: string) {
    for (const raw of text.split(/\r?\n/)) {
      // Trailing spaces are dropped unless escaped with a backslash.
      let line = raw.replace(/(?<!\\)\s+$/, '').replace(/\\(\s)$/, '$1');
      if (line === '' || line.startsWith('#')) continue;
      let negate = false;
      if (line.startsWith('!')) {
        negate = true;
        line = line.slice(1);
      } else if (line.startsWith('\\!') || line.startsWith('\\#')) line = line.slice(1);
      const dirOnly = line.endsWith('/');
      if (dirOnly) line = line.replace(/\/+$/, '');
      if (line === '') continue;
      this.rules.push({ re: patternRegex(line), negate, dirOnly });
    }
  }

  /** True when no pattern was given (nothing is ignored). */
  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** Whether the patterns themselves exclude this one path (`rel` uses "/"); parents are not looked at. */
  matches(rel: string, isDir: boolean): boolean {
    let ignored = false;
    for (const r of this.rules) {
      if (r.dirOnly && !isDir) continue;
      if (r.negate === ignored && r.re.test(rel)) ignored = !r.negate;
    }
    return ignored;
  }

  /** Whether `rel` (a file, or a folder when `isDir`) or any folder above it is ignored. */
  ignores(rel: string, isDir = false): boolean {
    if (this.rules.length === 0) return false;
    const parts = rel.split(/[\\/]/).filter((s) => s !== '');
    for (let i = 1; i < parts.length; i++) if (this.matches(parts.slice(0, i).join('/'), true)) return true;
    return this.matches(parts.join('/'), isDir);
  }
}

/** The rules of `dir`'s ignore file (none when it has no such file). */
export async function ignoreRulesOf(dir: string): Promise<IgnoreRules> {
  let text = '';
  try {
    text = await readFile(path.join(dir, IGNORE_FILE), 'utf8');
  } catch {
    // No ignore file: nothing is ignored.
  }
  return new IgnoreRules(text);
}
