import type { z } from 'zod';
import { UNKNOWN_KEY, UNKNOWN_KEY_SEPARATOR } from './object.js';
import { actualOf, didYouMean, nearest, quote } from './suggest.js';

/** One message of a zod issue, at the path (segments) it belongs to. */
export interface IssueMessage {
  readonly segs: readonly PropertyKey[];
  readonly message: string;
}

type Issue = z.core.$ZodIssue;
/** The parts of a zod schema's internals read here: its kind and the fields of the kinds walked. */
type Def = {
  type: string;
  shape?: Record<string, Schema>;
  innerType?: Schema;
  element?: Schema;
  valueType?: Schema;
  options?: Schema[];
  in?: Schema;
  entries?: Record<string, unknown>;
  values?: unknown[];
  checks?: { _zod?: { def: { check: string; format?: string; value?: unknown; inclusive?: boolean } } }[];
  getter?: () => Schema;
};
// Optional: a schema of another zod major version (a js: tool's own) has no `_zod`, and is then not read.
type Schema = { _zod?: { def: Def }; description?: string };

/** The schema a path leads to inside `schema`, seen through optional/default/pipe wrappers. */
function schemaAt(schema: Schema | undefined, segs: readonly PropertyKey[]): Schema | undefined {
  let s = schema;
  for (const seg of segs) {
    s = unwrap(s);
    const def = s?._zod?.def;
    if (!def) return undefined;
    if (def.type === 'object') s = typeof seg === 'string' && def.shape ? def.shape[seg] : undefined;
    else if (def.type === 'array') s = def.element;
    else if (def.type === 'record') s = def.valueType;
    else return undefined;
  }
  return s;
}

/** `s` and the schemas it wraps (optional, default, pipe, lazy), outermost first. */
function layers(s: Schema | undefined): Schema[] {
  const found: Schema[] = [];
  for (let cur = s; cur && found.length < 10; ) {
    found.push(cur);
    const def = cur._zod?.def;
    cur =
      def?.innerType ?? (def?.type === 'pipe' ? def.in : def?.type === 'lazy' ? def.getter?.() : undefined);
  }
  return found;
}

function unwrap(s: Schema | undefined): Schema | undefined {
  return layers(s).at(-1);
}

/** The first description found on a schema or the wrappers inside it. */
function descriptionOf(s: Schema | undefined): string | undefined {
  return layers(s).find((l) => l.description)?.description;
}

/** What a schema accepts, in words ("a list of strings", "one of "a", "b""), if known. */
function expectedOf(s: Schema | undefined, plural = false, depth = 0): string | undefined {
  // A recursive schema (baneling's tool_args: JSON of any depth) would describe itself forever.
  if (depth > 3) return undefined;
  const u = unwrap(s);
  const def = u?._zod?.def;
  if (!def) return undefined;
  switch (def.type) {
    case 'string':
      return plural ? 'strings' : 'a string';
    case 'number': {
      const int = def.checks?.some(
        (c) => c._zod?.def.format === 'safeint' || c._zod?.def.check === 'number_format',
      );
      const word = int ? 'whole number' : 'number';
      return `${plural ? `${word}s` : `a ${word}`}${range(def.checks)}`;
    }
    case 'boolean':
      return plural ? 'booleans (true or false)' : 'true or false';
    case 'array': {
      const inner = expectedOf(def.element, true, depth + 1);
      return `${plural ? 'lists' : 'a list'}${inner ? ` of ${inner}` : ''}`;
    }
    case 'object': {
      const required = Object.entries(def.shape ?? {})
        .filter(([, v]) => v._zod?.def.type !== 'optional')
        .map(([k]) => quote(k));
      const base = plural ? 'objects' : 'an object';
      return required.length > 0 && required.length <= 3 ? `${base} with ${required.join(', ')}` : base;
    }
    case 'record':
      return plural ? 'objects' : 'an object';
    case 'enum':
      return `one of ${Object.values(def.entries ?? {})
        .map((v) => quote(v))
        .join(', ')}`;
    case 'literal':
      return (def.values ?? []).map((v) => quote(v)).join(' or ');
    case 'union': {
      const parts = (def.options ?? []).map((o) => expectedOf(o, plural, depth + 1));
      return parts.every(Boolean) ? [...new Set(parts)].join(' or ') : undefined;
    }
    default:
      return undefined;
  }
}

/** The bounds of a number schema in words: " from 0 to 2", " of 1 or more", or nothing. */
function range(checks: Def['checks']): string {
  let min: string | undefined;
  let max: string | undefined;
  for (const c of checks ?? []) {
    const d = c._zod?.def;
    if (d?.check === 'greater_than') min = d.inclusive ? `${d.value}` : `more than ${d.value}`;
    if (d?.check === 'less_than') max = d.inclusive ? `${d.value}` : `less than ${d.value}`;
  }
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return /^more/.test(min) ? ` ${min}` : ` of ${min} or more`;
  if (max !== undefined) return /^less/.test(max) ? ` ${max}` : ` of ${max} or less`;
  return '';
}

/** The zod type name of an invalid_type issue in words. */
function expectedName(expected: string): string {
  switch (expected) {
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'an object';
    case 'boolean':
      return 'true or false';
    case 'int':
      return 'a whole number';
    case 'undefined':
    case 'never':
      return 'absent';
    default:
      return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
  }
}

function valueAt(root: unknown, segs: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let cur = root;
  for (const seg of segs) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, seg))
      return { found: false, value: undefined };
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return { found: true, value: cur };
}

/** A schema description as the end of a sentence: lower-case start, the template note folded in. */
function aboutText(desc: string | undefined): string {
  if (!desc) return '';
  const short = desc
    .split(/; |\. /)[0]!
    .replace(/ \(Nunjucks template\)$/, ', a Nunjucks template')
    // A parenthesis inside the parenthesis this text goes into reads badly: drop asides.
    .replace(/\s*\([^()]*\)/g, '');
  return ` (${short.charAt(0).toLowerCase()}${short.slice(1)})`;
}

function sizeWord(origin: string, n: number): string {
  if (origin === 'array' || origin === 'set') return `${n} ${n === 1 ? 'entry' : 'entries'}`;
  if (origin === 'string') return `${n} character${n === 1 ? '' : 's'}`;
  return String(n);
}

/** A zod message we did not write: the default English text of an issue. */
function isDefault(message: string): boolean {
  return /^(Invalid|Too (small|big)|Unrecognized key|Expected|Required)\b/.test(message);
}

interface Ctx {
  readonly root: unknown;
  readonly schema: Schema | undefined;
}

/** The sentence of one issue at `segs` (relative to the context's root). */
function sentence(issue: Issue, segs: readonly PropertyKey[], ctx: Ctx): string {
  const at = valueAt(ctx.root, segs);
  const target = schemaAt(ctx.schema, segs);
  switch (issue.code) {
    case 'invalid_type': {
      const want = expectedOf(target) ?? expectedName(issue.expected);
      const key = segs[segs.length - 1];
      if (!at.found && typeof key === 'string') {
        const parent = valueAt(ctx.root, segs.slice(0, -1));
        if (
          parent.found &&
          parent.value !== null &&
          typeof parent.value === 'object' &&
          !Array.isArray(parent.value)
        )
          return `missing required key ${quote(key)}${aboutText(descriptionOf(target))}; add it (${want})`;
      }
      let fix = '';
      // Only a list of strings is fixed by wrapping the text; the split is an argv's, as for `cmd`.
      const element = unwrap(unwrap(target)?._zod?.def.element)?._zod?.def.type;
      if (
        issue.expected === 'array' &&
        typeof at.value === 'string' &&
        element === 'string' &&
        at.value.trim()
      )
        fix = `; write it as a list, e.g. [${at.value
          .trim()
          .split(/\s+/)
          .slice(0, 6)
          .map((w) => quote(w, 40))
          .join(', ')}]`;
      return `must be ${want}, not ${at.found ? actualOf(at.value) : 'missing'}${fix}`;
    }
    case 'invalid_value': {
      const allowed = issue.values.map((v) => quote(v));
      const got = at.found ? actualOf(at.value) : 'missing';
      const hint =
        typeof at.value === 'string'
          ? didYouMean(
              at.value,
              issue.values.filter((v) => typeof v === 'string'),
            )
          : '';
      return allowed.length === 1
        ? `must be ${allowed[0]}, not ${got}${hint}`
        : `must be one of ${allowed.join(', ')}, not ${got}${hint}`;
    }
    case 'too_small': {
      const n = Number(issue.minimum);
      if ((issue.origin === 'string' || issue.origin === 'array') && n === 1)
        return issue.origin === 'string' ? 'must not be empty' : 'must list at least one entry';
      if (issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set')
        return `must have at least ${sizeWord(issue.origin, n)}`;
      return `must be ${issue.inclusive ? 'at least' : 'more than'} ${n}, not ${actualOf(at.value)}`;
    }
    case 'too_big': {
      const n = Number(issue.maximum);
      if (issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set')
        return `must have at most ${sizeWord(issue.origin, n)}`;
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${n}, not ${actualOf(at.value)}`;
    }
    case 'invalid_format': {
      if (!isDefault(issue.message)) return issue.message;
      if (issue.format === 'url')
        return `must be a URL such as "https://example.com/v1", not ${actualOf(at.value)}`;
      if (issue.format === 'regex' && 'pattern' in issue)
        return `must match the pattern ${String(issue.pattern)}, not ${actualOf(at.value)}`;
      if (issue.format === 'starts_with' || issue.format === 'ends_with' || issue.format === 'includes')
        return `must ${issue.format.replace('_', ' ')} the required text, not ${actualOf(at.value)}`;
      return `must be a valid ${issue.format}, not ${actualOf(at.value)}`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}, not ${actualOf(at.value)}`;
    case 'unrecognized_keys':
      return `${UNKNOWN_KEY} ${quote(issue.keys[0])}`;
    case 'invalid_key':
      return `the key ${quote(segs[segs.length - 1])} is not allowed: ${issue.issues.map((i) => sentence(i, [], { root: segs[segs.length - 1], schema: undefined })).join('; ')}`;
    case 'invalid_element':
      return issue.issues.map((i) => sentence(i, [], { root: at.value, schema: undefined })).join('; ');
    case 'invalid_union':
      return unionSentence(issue, at, target, segs);
    default:
      return isDefault(issue.message) ? `is not valid, not ${actualOf(at.value)}` : issue.message;
  }
}

/** The union branch whose type fit the value (its problems are then the ones to report), if any. */
function fittingBranch(
  issue: Extract<Issue, { code: 'invalid_union' }>,
  target: Schema | undefined,
): { issues: readonly Issue[]; schema: Schema | undefined } | undefined {
  const errors: readonly (readonly Issue[])[] = issue.errors;
  let best: number | undefined;
  errors.forEach((errs, i) => {
    // A branch failing on the value's type at the root does not fit; of the others, the fewest problems wins.
    if (errs.length === 0 || errs.some((e) => e.code === 'invalid_type' && e.path.length === 0)) return;
    if (best === undefined || errs.length < errors[best]!.length) best = i;
  });
  if (best === undefined) return undefined;
  return { issues: errors[best]!, schema: unwrap(target)?._zod?.def.options?.[best] };
}

/** A union no branch of which fits: name what each branch accepts. */
function unionSentence(
  issue: Extract<Issue, { code: 'invalid_union' }>,
  at: { found: boolean; value: unknown },
  target: Schema | undefined,
  segs: readonly PropertyKey[],
): string {
  const errors: readonly (readonly Issue[])[] = issue.errors;
  const wanted =
    expectedOf(target) ??
    errors
      .flatMap((errs) => errs.filter((e) => e.code === 'invalid_type').map((e) => expectedName(e.expected)))
      .join(' or ');
  const key = segs[segs.length - 1];
  if (!at.found && typeof key === 'string')
    return `missing required key ${quote(key)}; add it (${wanted || 'a value'})`;
  return wanted ? `must be ${wanted}, not ${actualOf(at.value)}` : `is not valid: ${actualOf(at.value)}`;
}

/**
 * Every zod issue as messages written for a person, one per problem, at the path it belongs to.
 * `input` is the value that was validated (to name what was found) and `schema` the schema it was
 * validated with (to describe what is expected). An unknown key that is a near typo of a missing
 * required key of the same object is ONE problem, reported at the unknown key.
 */
export function describeIssues(issues: readonly Issue[], input: unknown, schema?: z.ZodType): IssueMessage[] {
  const ctx: Ctx = { root: input, schema: schema as unknown as Schema | undefined };
  // Missing required keys per parent path, to pair them with a typo among the unknown keys.
  const missing = new Map<string, { key: string; index: number }[]>();
  issues.forEach((issue, index) => {
    if (issue.code !== 'invalid_type' && issue.code !== 'invalid_union') return;
    const key = issue.path[issue.path.length - 1];
    if (typeof key !== 'string' || valueAt(input, issue.path).found) return;
    const parent = JSON.stringify(issue.path.slice(0, -1).map(String));
    missing.set(parent, [...(missing.get(parent) ?? []), { key, index }]);
  });
  const merged = new Set<number>();
  const out: { index: number; m: IssueMessage }[] = [];
  issues.forEach((issue, index) => {
    if (issue.code !== 'unrecognized_keys') return;
    const parent = JSON.stringify(issue.path.map(String));
    const own = issue.message.split(UNKNOWN_KEY_SEPARATOR);
    issue.keys.forEach((k, i) => {
      const candidates = (missing.get(parent) ?? []).filter((c) => !merged.has(c.index));
      const near = nearest(
        k,
        candidates.map((c) => c.key),
      );
      const pair = candidates.find((c) => c.key === near);
      let message: string;
      if (pair) {
        merged.add(pair.index);
        message = `${UNKNOWN_KEY} ${quote(k)}: did you mean ${quote(pair.key)}? (${pair.key} is required)`;
      } else {
        const mine = own[i];
        message = mine?.startsWith(UNKNOWN_KEY)
          ? mine
          : `${UNKNOWN_KEY} ${quote(k)}; remove it or check its spelling`;
      }
      out.push({ index, m: { segs: [...issue.path, k], message } });
    });
  });
  issues.forEach((issue, index) => {
    if (issue.code === 'unrecognized_keys' || merged.has(index)) return;
    if (issue.code === 'invalid_union') {
      const branch = fittingBranch(issue, schemaAt(ctx.schema, issue.path));
      if (branch) {
        const value = valueAt(input, issue.path).value;
        for (const m of describeIssues(branch.issues, value, branch.schema as unknown as z.ZodType))
          out.push({ index, m: { segs: [...issue.path, ...m.segs], message: m.message } });
        return;
      }
    }
    out.push({ index, m: { segs: issue.path, message: sentence(issue, issue.path, ctx) } });
  });
  return out.sort((a, b) => a.index - b.index).map((o) => o.m);
}

/** Issues as one line, "path: message; path: message", paths joined with `sep` ("(root)" for none). */
export function issuesText(issues: readonly Issue[], input: unknown, schema?: z.ZodType, sep = '.'): string {
  return describeIssues(issues, input, schema)
    .map((m) => `${m.segs.map(String).join(sep) || '(root)'}: ${m.message}`)
    .join('; ');
}
