import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { ValidationProblem } from '../core/errors.js';
import { syntaxProblem } from './parse.js';

let yamlModule: typeof Yaml | undefined;

/**
 * The yaml package, loaded on first use (synchronously: loading is synchronous): a server of JSON
 * files without problems never needs it, and it was a sixth of the start-up imports.
 */
export function yamlLib(): typeof Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlModule;
}

/**
 * Most alias expansions one file may make. An alias bomb (a few lines whose aliases nest into
 * billions of nodes) is refused; real files reuse a prompt or a node a handful of times.
 */
export const MAX_ALIAS_COUNT = 100;

/** Deepest `[`/`{` nesting handed to the YAML parser, which recurses (and overflows near 1,000). */
const MAX_FLOW_DEPTH = 200;
/** Widest indentation (plus compact "- - -" items) handed to the YAML parser, for the same reason. */
const MAX_BLOCK_INDENT = 300;

/**
 * Offset where the text nests deeper than the YAML parser can take, or -1. A rough scan (quotes and
 * comments are skipped; brackets inside plain text count) that runs before the parser ever sees the
 * text: the parser's recursion, not the 64 levels a hatchery may have, is what this guards.
 */
export function tooDeepOffset(text: string): number {
  let depth = 0;
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (lineStart) {
      if (c === 32 || (c === 45 && text.charCodeAt(i + 1) === 32)) {
        if (++indent > MAX_BLOCK_INDENT) return i;
        continue;
      }
      lineStart = false;
    }
    if (c === 10) {
      lineStart = true;
      indent = 0;
    } else if (c === 91 || c === 123) {
      if (++depth > MAX_FLOW_DEPTH) return i;
    } else if (c === 93 || c === 125) depth = Math.max(0, depth - 1);
    else if (c === 34) {
      // A double-quoted string (JSON's only kind): skip it, escapes included.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 35 && (i === 0 || text.charCodeAt(i - 1) === 32)) {
      while (i + 1 < text.length && text.charCodeAt(i + 1) !== 10) i++;
    }
  }
  return -1;
}

/** File names read as YAML: `.yaml` and `.yml`. */
export function isYamlFile(file: string): boolean {
  const f = file.toLowerCase();
  return f.endsWith('.yaml') || f.endsWith('.yml');
}

/** What the yaml package names its errors, in words a user acts on. */
function reason(code: string, message: string, text: string, pos: number): string {
  if (code === 'DUPLICATE_KEY') {
    const key = /^\s*["']?([^"':\n]*)/.exec(text.slice(pos, pos + 60))?.[1]?.trim();
    return `duplicate key${key ? ` "${key}"` : ''}: a key may appear once per object; keep one`;
  }
  if (code === 'MULTIPLE_DOCS')
    return 'the file holds several YAML documents (---); a hatchery is one document';
  return message.slice(0, 160);
}

/**
 * Parses YAML text (anchors, aliases and `<<` merge keys work; duplicate keys are errors). The first
 * error becomes a problem with its line and column; the value is plain JSON data.
 */
export function parseYaml(text: string): { value?: unknown; problem?: ValidationProblem } {
  if (text.trim() === '')
    return { problem: { path: '', message: 'the file is empty (expected a YAML mapping)' } };
  const deep = tooDeepOffset(text);
  if (deep >= 0)
    return {
      problem: syntaxProblem(
        'YAML',
        text,
        deep,
        'objects and arrays are nested too deeply here; a hatchery file needs far fewer levels, so flatten this value',
      ),
    };
  const doc = yamlLib().parseDocument(text, {
    prettyErrors: false,
    merge: true,
    uniqueKeys: true,
    // No warnings on the console (a collection used as a key...); "silent" would drop errors too.
    logLevel: 'error',
  });
  const err = doc.errors[0];
  if (err) {
    const pos = err.pos[0];
    return { problem: syntaxProblem('YAML', text, pos, reason(err.code, err.message, text, pos)) };
  }
  try {
    const value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    if (value === null || value === undefined)
      return { problem: { path: '', message: 'the file is empty (expected a YAML mapping)' } };
    return { value };
  } catch (e) {
    const msg = (e as Error).message;
    if (/alias count/i.test(msg))
      return {
        problem: {
          path: '',
          message: `the file expands its aliases (*name) more than ${MAX_ALIAS_COUNT} times; this looks like an alias bomb, so it is not loaded`,
          fix: 'reuse fewer aliases, or write the repeated parts out',
        },
      };
    return { problem: { path: '', message: `invalid YAML: ${msg.slice(0, 160)}` } };
  }
}
