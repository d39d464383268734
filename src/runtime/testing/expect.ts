import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { canonicalJson } from '../../journal/canonical.js';
import { issuesText } from '../../schema/issues.js';
import { quote } from '../../schema/suggest.js';
import type { Expectations } from '../../schema/test-file.js';

/** What a case's run gave: its output (or error), the nodes it took and the tokens it used. */
export interface Outcome {
  output?: string;
  /** Structured value of the final node (output_schema), used before parsing the text. */
  value?: unknown;
  error?: string;
  nodes: string[];
  tokens: number;
}

/** Longest output quoted in a failure. */
const SHOWN = 300;

/** The expectations that do not hold, each as one line saying what differed; empty when the case passed. */
export function check(expect: Expectations, o: Outcome): string[] {
  const failures: string[] = [];
  if (expect.nodes && !isDeepStrictEqual(expect.nodes, o.nodes)) {
    failures.push(`nodes: expected [${expect.nodes.join(', ')}], ran [${o.nodes.join(', ')}]`);
  }
  if (expect.max_tokens !== undefined && o.tokens > expect.max_tokens) {
    failures.push(`tokens: used ${o.tokens}, more than max_tokens ${expect.max_tokens}`);
  }
  if (expect.error !== undefined) {
    if (o.error === undefined)
      failures.push(`error: expected the run to fail with ${quote(expect.error)}, it succeeded`);
    else if (!o.error.includes(expect.error))
      failures.push(`error: expected it to contain ${quote(expect.error)}, got ${quote(o.error, SHOWN)}`);
    return failures;
  }
  if (o.error !== undefined) return [`the run failed: ${o.error}`, ...failures];
  const out = o.output ?? '';
  const shown = quote(out, SHOWN);
  if (expect.equals !== undefined && out.replace(/\n$/, '') !== expect.equals.replace(/\n$/, '')) {
    failures.push(`equals: expected ${quote(expect.equals, SHOWN)}, got ${shown}`);
  }
  for (const text of list(expect.contains)) {
    if (!out.includes(text)) failures.push(`contains: ${quote(text)} not found in ${shown}`);
  }
  for (const text of list(expect.not_contains)) {
    if (out.includes(text)) failures.push(`not_contains: ${quote(text)} found in ${shown}`);
  }
  if (expect.regex !== undefined && !new RegExp(expect.regex).test(out)) {
    failures.push(`regex: /${expect.regex}/ does not match ${shown}`);
  }
  if (expect.json || expect.schema) {
    const parsed = parseOutput(o);
    if ('error' in parsed) {
      failures.push(`json: the output is not JSON (${parsed.error}): ${shown}`);
      return failures;
    }
    for (const c of expect.json ?? []) {
      const got = jsonPath(parsed.value, c.path);
      if (!got.found) failures.push(`json ${c.path}: ${got.why}`);
      else if (canonicalJson(got.value) !== canonicalJson(c.equals))
        failures.push(
          `json ${c.path}: expected ${canonicalJson(c.equals)}, got ${quote(canonicalJson(got.value), SHOWN)}`,
        );
    }
    if (expect.schema) {
      const validator = z.fromJSONSchema(expect.schema as Parameters<typeof z.fromJSONSchema>[0]);
      const res = validator.safeParse(parsed.value);
      if (!res.success) {
        const why = issuesText(res.error.issues, parsed.value, validator);
        failures.push(`schema: ${why}`);
      }
    }
  }
  return failures;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function parseOutput(o: Outcome): { value: unknown } | { error: string } {
  if (o.value !== undefined) return { value: o.value };
  try {
    return { value: JSON.parse(o.output ?? '') };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * The value at a JSON path: `$`, `.key`, `[n]`, `["key"]` steps (`$.items[0].title`, or without `$`:
 * `items[0].title`).
 */
export function jsonPath(
  root: unknown,
  path: string,
): { found: true; value: unknown } | { found: false; why: string } {
  const steps: (string | number)[] = [];
  const re = /\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/y;
  let rest = path.startsWith('$') ? path.slice(1) : path;
  while (rest.length > 0) {
    re.lastIndex = 0;
    const m = re.exec(rest);
    if (!m) return { found: false, why: `cannot read the path at ${quote(rest)}` };
    steps.push(m[2] !== undefined ? Number(m[2]) : (m[1] ?? JSON.parse(`"${m[3]}"`)));
    rest = rest.slice(m[0].length);
  }
  let cur: unknown = root;
  let at = '$';
  for (const s of steps) {
    if (typeof s === 'number') {
      if (!Array.isArray(cur) || s >= cur.length) return { found: false, why: `${at} has no item ${s}` };
      cur = cur[s];
      at += `[${s}]`;
    } else {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, s))
        return { found: false, why: `${at} has no key ${quote(s)}` };
      cur = (cur as Record<string, unknown>)[s];
      at += `.${s}`;
    }
  }
  return { found: true, value: cur };
}
