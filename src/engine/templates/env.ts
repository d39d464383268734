import nunjucks from 'nunjucks';
import { HatcheryError } from '../../core/errors.js';
import { allowCall, memberLookup, raiseInTemplate, renderState, runtime, tooLongText } from './sandbox.js';

/** The most items `range()` makes: a template must not be able to exhaust memory with one call. */
const MAX_RANGE = 100_000;

type Fn = (...args: unknown[]) => unknown;
type Ctx = { env: { opts: { throwOnUndefined?: boolean } } };

/**
 * Loads `{% include %}`, `{% import %}` and `{% extends %}` targets with the fread of the render in
 * progress: the same PathGuard and folder as fread, so a template reads nothing fread may not, and a
 * hatchery never reads through another's roots. Compiled templates are cached for one render only
 * (an include in a loop is read once; the next render reads the file again).
 */
const guardedLoader = {
  get cache(): Record<string, unknown> {
    renderState.loaded ??= Object.create(null) as Record<string, unknown>;
    return renderState.loaded;
  },
  // nunjucks assigns a shared `{}` here at startup; the cache is the render's, so that is ignored.
  set cache(_ignored: unknown) {},
  getSource(name: string): { src: string; path: string } | null {
    const fread = renderState.fread;
    if (typeof fread !== 'function')
      raiseInTemplate(
        new HatcheryError('TEMPLATE', `cannot load template "${name}" outside a run`, { path: name }),
      );
    try {
      return { src: String((fread as Fn)(name)), path: name };
    } catch (err) {
      // A missing file is "not found" to nunjucks, so `{% include "x" ignore missing %}` works;
      // a refused path (PATH_DENIED) stays an error.
      if (err instanceof HatcheryError && err.code === 'FILE_IO' && err.message.includes('ENOENT')) {
        renderState.pending = undefined;
        return null;
      }
      throw err;
    }
  },
};

/** The one shared environment: autoescape off (prompts are not HTML), undefined output is an error. */
export const templateEnv = new nunjucks.Environment(guardedLoader as unknown as nunjucks.ILoader, {
  autoescape: false,
  throwOnUndefined: true,
});

/** How deep include/import/extends may nest (counting sequential ones: nunjucks continues inside them). */
const MAX_INCLUDE_DEPTH = 50;
let includeDepth = 0;

const env = templateEnv as unknown as {
  getTemplate(...args: unknown[]): unknown;
  globals: Record<string, unknown>;
  filters: Record<string, Fn>;
  tests: Record<string, Fn>;
  getFilter(name: string): Fn;
  getTest(name: string): Fn;
};
const hasOwn = Object.prototype.hasOwnProperty;

// Without a limit a template that includes itself recurses until the stack overflows, and nunjucks
// rebuilds its error message at every level on the way out: seconds of work for one render.
const getTemplate = env.getTemplate;
env.getTemplate = function limitedGetTemplate(...args: unknown[]): unknown {
  if (includeDepth >= MAX_INCLUDE_DEPTH)
    raiseInTemplate(
      new HatcheryError(
        'TEMPLATE',
        `include/import/extends nest more than ${MAX_INCLUDE_DEPTH} deep: does a template load itself?`,
        { path: String(args[0]) },
      ),
    );
  includeDepth++;
  // Compile a partial when it is loaded (eagerCompile): a syntax error is then thrown inside this
  // render. Compiled lazily, nunjucks reports it from a later microtask, where it escapes the render
  // and ends the process (include, import and extends all come through here).
  if (typeof args[1] === 'boolean') args[1] = true;
  try {
    return getTemplate.apply(this, args);
  } finally {
    includeDepth--;
  }
};

// Filters and tests are looked up by name on plain objects: only own entries, so `| constructor`
// or `is toString` is "not found" instead of Object's members.
env.getFilter = function getFilter(name: string): Fn {
  if (!hasOwn.call(this.filters, name)) throw new Error(`filter not found: ${name}`);
  return this.filters[name]!;
};

const SafeString = (
  nunjucks as unknown as { runtime: { SafeString: new (...a: unknown[]) => { length: number } } }
).runtime.SafeString;

/**
 * A filter whose text result is held to the template text limit: `replace`, `join` or `indent` in a
 * loop can double a string each time, and must stop at the limit, not when memory runs out.
 */
function measuredFilter(name: string, filter: Fn): Fn {
  return function measured(this: unknown, ...args: unknown[]): unknown {
    const r = filter.apply(this, args);
    if (
      (typeof r === 'string' || r instanceof SafeString) &&
      (r as { length: number }).length > renderState.limit
    )
      tooLongText(`the result of filter "${name}"`, (r as { length: number }).length);
    return r;
  };
}
env.getTest = function getTest(name: string): Fn {
  if (!hasOwn.call(this.tests, name)) throw new Error(`test not found: ${name}`);
  return this.tests[name]!;
};

// Globals: closures instead of nunjucks' `this`-based cycler (callWrap calls with the context as
// `this`), range capped, and everything they hand out registered as callable.
env.globals = Object.assign(Object.create(null), {
  range: allowCall(function range(start: number, stop?: number, step?: number): number[] {
    if (stop === undefined) {
      stop = start;
      start = 0;
      step = 1;
    } else if (!step) step = 1;
    const n = Math.ceil((Number(stop) - Number(start)) / Number(step));
    if (!(n <= MAX_RANGE))
      raiseInTemplate(
        new HatcheryError('TEMPLATE', `range() would make more than ${MAX_RANGE} items`, {
          variable: 'range',
        }),
      );
    const arr: number[] = [];
    for (let i = 0; i < n; i++) arr.push(Number(start) + i * step);
    return arr;
  }),
  cycler: allowCall(function cycler(...items: unknown[]) {
    let index = -1;
    const c = {
      current: null as unknown,
      reset: allowCall(() => {
        index = -1;
        c.current = null;
      }),
      next: allowCall(() => {
        index = (index + 1) % Math.max(items.length, 1);
        c.current = items[index];
        return c.current;
      }),
    };
    return c;
  }),
  joiner: allowCall(function joiner(sep?: unknown) {
    const s = sep || ',';
    let first = true;
    return allowCall(() => {
      const v = first ? '' : s;
      first = false;
      return v;
    });
  }),
});

/** Reads a filter's attribute path (`"a.b"` or an index) through the sandbox's member lookup. */
function attrGetter(attr: unknown): (item: unknown) => unknown {
  if (typeof attr === 'number') return (item) => memberLookup(item, attr);
  if (typeof attr !== 'string')
    raiseInTemplate(
      new HatcheryError('TEMPLATE', 'a filter attribute must be a string or a number', {
        variable: String(attr),
      }),
    );
  const parts = attr.split('.');
  return (item) => {
    let v = item;
    for (const p of parts) v = memberLookup(v, p);
    return v;
  };
}

function asArray(arr: unknown, filter: string): unknown[] {
  if (Array.isArray(arr)) return arr;
  if (typeof arr === 'string') return [...arr];
  throw new Error(`${filter} filter: expected a list`);
}

// nunjucks' own versions of the filters that take attribute names read properties directly
// (inherited ones included); these read them through the sandbox instead.
const builtin = env.filters;
const original = { join: builtin.join!, sum: builtin.sum! };
const filters: Record<string, Fn> = {
  join(arr: unknown, del?: unknown, attr?: unknown) {
    if (!attr) return original.join(arr, del);
    const get = attrGetter(attr);
    return original.join(asArray(arr, 'join').map(get), del);
  },
  sum(arr: unknown, attr?: unknown, start?: unknown) {
    if (!attr) return original.sum(arr, undefined, start);
    const get = attrGetter(attr);
    return original.sum(asArray(arr, 'sum').map(get), undefined, start);
  },
  selectattr(arr: unknown, attr: unknown) {
    const get = attrGetter(attr);
    return asArray(arr, 'selectattr').filter((item) => !!get(item));
  },
  rejectattr(arr: unknown, attr: unknown) {
    const get = attrGetter(attr);
    return asArray(arr, 'rejectattr').filter((item) => !get(item));
  },
  groupby(this: Ctx, arr: unknown, attr: unknown) {
    const get = attrGetter(attr);
    const groups: Record<string, unknown[]> = Object.create(null);
    for (const item of asArray(arr, 'groupby')) {
      const key = get(item);
      if (key === undefined && this.env.opts.throwOnUndefined)
        throw new TypeError(`groupby: attribute "${String(attr)}" resolved to undefined`);
      const k = String(key);
      const group = groups[k];
      if (group) group.push(item);
      else groups[k] = [item];
    }
    return groups;
  },
  /** Text that holds JSON, as its value (`{{ (out.Raw | fromjson).title }}`); a value passes as it is. */
  fromjson(text: unknown) {
    if (typeof text !== 'string') return text;
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      raiseInTemplate(
        new HatcheryError(
          'TEMPLATE',
          `fromjson: the text is not JSON (${(err as Error).message}); it starts ${JSON.stringify(text.slice(0, 60))}`,
          { variable: 'fromjson' },
        ),
      );
    }
  },
  sort: runtime.makeMacro(['value', 'reverse', 'case_sensitive', 'attribute'], [], function sort(
    this: Ctx,
    arr: unknown,
    reversed: unknown,
    caseSens: unknown,
    attr: unknown,
  ) {
    const get = attr ? attrGetter(attr) : undefined;
    const strict = this.env.opts.throwOnUndefined;
    const keyed = asArray(arr, 'sort').map((v) => {
      let k = get ? get(v) : v;
      if (get && strict && k === undefined)
        throw new TypeError(`sort: attribute "${String(attr)}" resolved to undefined`);
      if (!caseSens && typeof k === 'string') k = k.toLowerCase();
      return { k: k as string | number, v };
    });
    keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0) * (reversed ? -1 : 1));
    return keyed.map((e) => e.v);
  } as Fn),
};

// Filters whose size argument (the first after the value) allocates that much (padding, fill items,
// slices): capped like range.
for (const name of ['center', 'indent', 'batch', 'slice']) {
  const fn = builtin[name]!;
  filters[name] = function sized(this: unknown, ...args: unknown[]) {
    if (Number(args[1]) > MAX_RANGE)
      raiseInTemplate(
        new HatcheryError('TEMPLATE', `${name}: a size above ${MAX_RANGE} is refused`, { variable: name }),
      );
    return fn.apply(this, args);
  };
}
for (const [name, fn] of Object.entries(filters)) templateEnv.addFilter(name, fn);
// Every filter, nunjucks' own and these, has its text measured (see measuredFilter).
for (const [name, fn] of Object.entries(builtin)) builtin[name] = measuredFilter(name, fn);
