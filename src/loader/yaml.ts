import { parseDocument } from 'yaml';
import type { ValidationProblem } from '../core/errors.js';
import { syntaxProblem } from './parse.js';

/**
 * Most alias expansions one file may make. An alias bomb (a few lines whose aliases nest into
 * billions of nodes) is refused; real files reuse a prompt or a node a handful of times.
 */
export const MAX_ALIAS_COUNT = 100;

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
  if (code === 'MULTIPLE_DOCS') return 'the file holds several YAML documents (---); a hatchery is one document';
  return message.slice(0, 160);
}

/**
 * Parses YAML text (anchors, aliases and `<<` merge keys work; duplicate keys are errors). The first
 * error becomes a problem with its line and column; the value is plain JSON data.
 */
export function parseYaml(text: string): { value?: unknown; problem?: ValidationProblem } {
  if (text.trim() === '')
    return { problem: { path: '', message: 'the file is empty (expected a YAML mapping)' } };
  const doc = parseDocument(text, {
    prettyErrors: false,
    merge: true,
    uniqueKeys: true,
    // Warnings (a collection used as a key...) would go to the console; the value check reports them.
    logLevel: 'silent',
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
