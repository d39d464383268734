import { internalized } from '../../core/objects.js';
import { OutSlots, outAsDictionary } from '../out-slots.js';
import { templateEnv } from './env.js';
import { memberLookup, renderState, runtime } from './sandbox.js';

/**
 * The fast path of the templates almost every prompt is made of: text and `{{ name.field[0] }}`
 * lookups, nothing else. Nunjucks compiles each template to a JavaScript function and builds a
 * Context (a copy of the variables), a Frame and a callback per render; with one function per node
 * of a large file, V8 runs them cold and flushes their bytecode between runs. Such a template is
 * instead read once into a plan (text and lookup paths) that one shared loop renders, through the
 * same sandboxed lookups the compiled code calls. Anything else, or a value the loop does not print
 * itself (an object, null, undefined, a denied lookup), goes to nunjucks, which gives the same text
 * or the same error it always did.
 */

/** One `{{ }}` tag: the variable and the keys looked up on it. */
interface Lookup extends SlotCache {
  name: string;
  keys: (string | number)[];
  /** The name is `ctx` or `out`: the render's own variables, read directly when printable. */
  scoped: boolean;
}

/** Where a template keeps the slot of its `out.<key>` in a run's OutSlots, and the names it is valid for. */
export interface SlotCache {
  slot: number;
  slotOf: readonly string[] | undefined;
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
    // A copy of exact length: a pushed-to array keeps room for 17 elements (152 bytes), and a
    // template keeps its plan for as long as its file is loaded.
    if (open < 0) return parts.slice();
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

const OBJECT_PROTO = Object.prototype;

function lookupOf(name: string, path: string): Lookup | null {
  if (RESERVED.has(name)) return null;
  const keys: (string | number)[] = [];
  for (const s of path.matchAll(STEP)) {
    if (s[1] !== undefined) {
      // After a dot nunjucks wants a symbol: `x.true` does not parse.
      if (RESERVED.has(s[1]) || !NAME.test(s[1])) return null;
      keys.push(internalized(s[1]));
    } else if (s[2] !== undefined) keys.push(Number.parseInt(s[2], 10));
    else keys.push(internalized(s[3] ?? s[4]!));
  }
  return {
    name: internalized(name),
    keys: keys.slice(),
    scoped: name === 'ctx' || name === 'out',
    slot: -1,
    slotOf: undefined,
  };
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
 * Renders a plan with `vars`; undefined when it cannot give nunjucks' text itself (the caller renders
 * with nunjucks then). Never throws.
 */
export function renderPlan(
  plan: Plan,
  vars: { ctx: unknown; out: unknown; fread: unknown },
): string | undefined {
  let output = '';
  try {
    for (let i = 0; i < plan.length; i++) {
      const part = plan[i]!;
      if (typeof part === 'string') {
        output += part;
        continue;
      }
      // `out.X` / `ctx.X` (most lookups) read directly (see scopedField); longer paths and anything
      // but a printable value take the sandbox's way.
      if (part.scoped && part.keys.length === 1) {
        const top = part.name === 'out' ? vars.out : vars.ctx;
        const found =
          top instanceof OutSlots ? slotField(top, part.keys[0]!, part) : scopedField(top, part.keys[0]!);
        if (found !== undefined) {
          output += found as string;
          continue;
        }
      }
      // The sandbox reads the run's outputs as the dictionary they stand for (out-slots.ts).
      outAsDictionary(vars);
      return renderFrom(plan, i, output, vars);
    }
    return output;
  } catch {
    // A getter that threw: nunjucks renders again and reports it as it always has.
    return undefined;
  }
}

/**
 * `top[key]` for `ctx.key` / `out.key` when the sandbox gives it as it is and it prints as itself (a
 * string, number or boolean); undefined otherwise. `out` and `ctx` are own fields of every render's
 * variables, which the sandbox gives as they are; the run's scope objects hold data properties only,
 * and memberLookup returns what a plain read finds in their chain, unless the key also names a field
 * of Object.prototype, which it refuses when the chain does not have it.
 */
export function scopedField(top: unknown, key: string | number): string | number | boolean | undefined {
  if (top === null || typeof top !== 'object') return undefined;
  const found = (top as Record<string | number, unknown>)[key];
  const t = typeof found;
  return (t === 'string' || t === 'number' || t === 'boolean') && !(key in OBJECT_PROTO)
    ? (found as string | number | boolean)
    : undefined;
}

/**
 * `value` when it prints as itself (a string, number or boolean), else undefined: an output read from
 * a run's slots (out-slots.ts). Unlike scopedField, no check against Object.prototype is needed: a
 * slot holds an own field of the dictionary it stands for, which the sandbox gives as it is.
 */
function printable(value: unknown): string | number | boolean | undefined {
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean'
    ? (value as string | number | boolean)
    : undefined;
}

/**
 * `out.<key>` read from a run's slots when it prints as itself (see printable), as scopedField would
 * read it from the dictionary; the slot is found once per loaded file and kept in `at`.
 */
export function slotField(
  slots: OutSlots,
  key: string | number,
  at: SlotCache,
): string | number | boolean | undefined {
  if (at.slotOf !== slots.names) {
    at.slot = typeof key === 'string' ? slots.indexOf(key) : -1;
    at.slotOf = slots.names;
  }
  return printable(slots.get(at.slot));
}

/** A plan of the form `text{{ ctx.key }}text` (or `out.key`; either text may be empty), taken apart. */
export interface OneLookup {
  before: string;
  onOut: boolean;
  key: string | number;
  after: string;
}

/** The plan as a {@link OneLookup}, or undefined when it has another form. */
export function oneLookup(plan: Plan): OneLookup | undefined {
  let i = 0;
  const before = typeof plan[0] === 'string' ? (plan[i++] as string) : '';
  const part = plan[i++];
  if (part === undefined || typeof part === 'string' || !part.scoped || part.keys.length !== 1)
    return undefined;
  const after = typeof plan[i] === 'string' ? (plan[i++] as string) : '';
  if (i !== plan.length) return undefined;
  return { before, onOut: part.name === 'out', key: part.keys[0]!, after };
}

/** The rest of a plan from part `from`, every lookup through the sandbox's own functions. */
function renderFrom(
  plan: Plan,
  from: number,
  output: string,
  vars: { ctx: unknown; out: unknown; fread: unknown },
): string | undefined {
  const state = renderState;
  state.fread = vars.fread;
  state.ctx = vars.ctx;
  state.out = vars.out;
  lookupContext.ctx = vars as Record<string, unknown>;
  try {
    for (let i = from; i < plan.length; i++) {
      const part = plan[i]!;
      if (typeof part === 'string') {
        output += part;
        continue;
      }
      let v = runtime.contextOrFrameLookup(lookupContext, topFrame, part.name);
      const keys = part.keys;
      for (let k = 0; k < keys.length; k++) v = memberLookup(v, keys[k]);
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
