import nunjucks from 'nunjucks';
import { HatcheryError } from '../../core/errors.js';

/**
 * The template sandbox. Templates are deny by default: a member lookup returns only own data
 * properties of plain values (never a function's property, a prototype or a getter), a call reaches
 * only functions registered here (fread, range/cycler/joiner and what they return, macros and
 * `caller`) or an allow-listed string/array/number method, and a top-level name is only a variable of
 * the render or a global. Everything else is a TEMPLATE error. This module patches the one nunjucks
 * runtime this package owns when it is first imported.
 */

/** State of the render in progress (rendering is synchronous, so one slot is enough). */
interface RenderState {
  /** The render's fread: callable, and what `{% include %}` reads templates with. */
  fread: unknown;
  /** A helper's typed error (e.g. fread's PATH_DENIED), which nunjucks would flatten into a string. */
  pending: unknown;
  /** Templates loaded by include/import/extends during this render (made on first use). */
  loaded: Record<string, unknown> | undefined;
  /** The render's ctx and out: the run's scope objects, read on a fast path. */
  ctx: unknown;
  out: unknown;
  /** Characters the render has printed so far (every `{{ }}`, macros and partials included). */
  printed: number;
  /** The most characters one text of a render may have (see setTemplateTextLimit). */
  limit: number;
}

/** Default of the template text limit: 8 Mi characters, far above any prompt. */
export const DEFAULT_TEMPLATE_TEXT_LIMIT = 8 * 1024 * 1024;

/**
 * The sandbox patches the nunjucks runtime, which every copy of this package in a process shares when
 * npm dedupes nunjucks. So the render state, the registry of callable functions and the patch itself
 * live on that runtime, under a registered symbol: a second copy joins them instead of patching again
 * with state of its own, which would leave the first copy's fread uncallable.
 */
interface SandboxShared {
  state: RenderState;
  callable: WeakSet<object>;
  installed: boolean;
}
const SHARED = Symbol.for('hatchery-mcp/template-sandbox');
const nunjucksRuntime = (nunjucks as unknown as { runtime: Record<symbol, SandboxShared | undefined> })
  .runtime;
const shared: SandboxShared = nunjucksRuntime[SHARED] ?? {
  state: {
    fread: undefined,
    pending: undefined,
    loaded: undefined,
    ctx: undefined,
    out: undefined,
    printed: 0,
    limit: DEFAULT_TEMPLATE_TEXT_LIMIT,
  },
  callable: new WeakSet<object>(),
  installed: false,
};
nunjucksRuntime[SHARED] = shared;

/** State of the render in progress, shared with every copy of this module in the process. */
export const renderState: RenderState = shared.state;

/**
 * Sets the most characters a template may print in one render, and the longest text it may build
 * with `~` or read with fread (process-wide: `--max-render-chars`). A template that doubles a string
 * in a loop ends with a TEMPLATE error at this size instead of filling memory.
 */
export function setTemplateTextLimit(chars: number): void {
  renderState.limit = chars;
}

/** Raises the TEMPLATE error of a text past the limit; `what` says which text. */
export function tooLongText(what: string, length: number): never {
  const limit = renderState.limit;
  raiseInTemplate(
    new HatcheryError(
      'TEMPLATE',
      `${what} reached ${length} characters, past the template limit of ${limit} (--max-render-chars); does a loop keep doubling a string?`,
      { limit },
    ),
  );
}

/** Throws `err` from inside a template helper so that `render` rethrows it unchanged. */
export function raiseInTemplate(err: unknown): never {
  renderState.pending = err;
  throw err;
}

const WHAT =
  'templates read only the own fields of data (ctx, out, inputs, loop variables) and call only filters, fread, range, cycler, joiner and macros';

function refuse(message: string, variable: string): never {
  raiseInTemplate(new HatcheryError('TEMPLATE', `${message}; ${WHAT}`, { variable }));
}

function deny(key: unknown, reason: string): never {
  const name = String(key);
  refuse(`"${name}" cannot be accessed in templates: ${reason}`, name);
}

// Functions a template may call (besides the render's own fread, checked by identity).
const callable = shared.callable;

/** Lets templates call `fn` (and hold it as a value): only for functions that run template code or are pure. */
export function allowCall<T extends object>(fn: T): T {
  callable.add(fn);
  return fn;
}

function isCallable(fn: unknown): boolean {
  return fn === renderState.fread || callable.has(fn as object);
}

/**
 * A method of a string, array or number bound to its receiver. Not a JS function, so nothing but
 * `callWrap` can invoke it, and its receiver and implementation are private.
 */
class BoundMethod {
  readonly #recv: unknown;
  readonly #fn: (...args: unknown[]) => unknown;
  readonly #name: string;

  constructor(recv: unknown, fn: (...args: unknown[]) => unknown, name: string) {
    this.#recv = recv;
    this.#fn = fn;
    this.#name = name;
  }

  /** Calls the method; arguments must be strings, numbers, booleans, null or regexes (no callbacks). */
  invoke(args: unknown[]): unknown {
    for (const a of args) {
      if (a !== null && typeof a === 'object' && !(a instanceof RegExp))
        deny(this.#name, 'methods take only strings, numbers, booleans or regexes as arguments');
      if (typeof a === 'function') deny(this.#name, 'methods never take functions as arguments');
    }
    return this.#fn.apply(this.#recv, args);
  }
}

type Fn = (...args: unknown[]) => unknown;
const S = String.prototype as unknown as Record<string, Fn>;
const A = Array.prototype as unknown as Record<string, Fn>;
const N = Number.prototype as unknown as Record<string, Fn>;

// Pure, callback-free methods that Jinja users reach for; the implementations are the builtins
// themselves (or tiny aliases), never exposed raw: lookups return a BoundMethod.
const STRING_METHODS = new Map<string, Fn>([
  ...[
    'split',
    'trim',
    'trimStart',
    'trimEnd',
    'toUpperCase',
    'toLowerCase',
    'startsWith',
    'endsWith',
    'includes',
    'indexOf',
    'lastIndexOf',
    'slice',
    'substring',
    'charAt',
    'replace',
    'replaceAll',
  ].map((m) => [m, S[m]!] as [string, Fn]),
  ['upper', S.toUpperCase!],
  ['lower', S.toLowerCase!],
  ['strip', S.trim!],
]);
const ARRAY_METHODS = new Map<string, Fn>(
  ['join', 'slice', 'indexOf', 'lastIndexOf', 'includes'].map((m) => [m, A[m]!] as [string, Fn]),
);
const NUMBER_METHODS = new Map<string, Fn>(['toFixed', 'toPrecision'].map((m) => [m, N[m]!] as [string, Fn]));

const hasOwn = Object.prototype.hasOwnProperty;
const lookupGetter = (
  Object.prototype as unknown as { __lookupGetter__: (this: object, k: PropertyKey) => unknown }
).__lookupGetter__;
const getProto = Object.getPrototypeOf as (o: object) => object | null;
const OBJECT_PROTO = Object.prototype;
const ARRAY_PROTO = Array.prototype;
const INDEX = /^(?:0|[1-9]\d*)$/;

type Runtime = {
  memberLookup: (obj: unknown, key: unknown) => unknown;
  callWrap: (obj: unknown, name: string, context: unknown, args: unknown[]) => unknown;
  contextOrFrameLookup: (
    context: NunjucksContext,
    frame: { lookup(n: string): unknown },
    name: string,
  ) => unknown;
  makeMacro: (argNames: string[], kwargNames: string[], func: Fn) => Fn;
  suppressValue: (val: unknown, autoescape: boolean) => unknown;
  SafeString: new (s: string) => { val: string };
};
type NunjucksContext = { ctx: Record<string, unknown>; env: { globals: Record<string, unknown> } };

/** The nunjucks runtime module (shared by every compiled template). */
export const runtime = (nunjucks as unknown as { runtime: Runtime }).runtime;
const SafeString = runtime.SafeString;

/** An own data property of `o` (a getter is refused, a function must be callable). */
function ownValue(o: object, key: string | number): unknown {
  if (lookupGetter.call(o, key) !== undefined) deny(key, 'it is a getter, not data');
  return dataValue((o as Record<string | number, unknown>)[key], key);
}

/** True when the chain from `p` ends in null without passing Object.prototype: ctx/out scope chains. */
function scopeChain(p: object): boolean {
  for (let q: object | null = p; q !== null; q = getProto(q)) if (q === OBJECT_PROTO) return false;
  return true;
}

/** A value read from data: a function is returned only when templates may call it. */
function dataValue(v: unknown, key: string | number): unknown {
  if (typeof v === 'function' && !isCallable(v)) deny(key, 'it is a function that templates cannot call');
  return v;
}

function objectMember(obj: object, key: string | number): unknown {
  const state = renderState;
  if (obj === state.ctx || obj === state.out) {
    // The run's ctx/out: null-prototype objects chained to the parent scope's, holding data
    // properties only (Runtime and Scope build them by assignment), so no getter check is needed;
    // that check is slow on these dictionary-mode objects and they are read in every template.
    for (let o: object | null = obj; o !== null && o !== OBJECT_PROTO; o = getProto(o))
      if (hasOwn.call(o, key)) return dataValue((o as Record<string | number, unknown>)[key], key);
    if (key in OBJECT_PROTO) deny(key, 'it is not a field of this value');
    return undefined;
  }
  if (hasOwn.call(obj, key)) return ownValue(obj, key);
  const p = getProto(obj);
  // Child scopes read their parent's ctx/out through the prototype chain; those chains are made of
  // null-prototype objects only. Class and builtin prototypes are never read from.
  if (p !== null && p !== OBJECT_PROTO && p !== ARRAY_PROTO && scopeChain(p)) {
    for (let o: object | null = p; o !== null; o = getProto(o))
      if (hasOwn.call(o, key)) return ownValue(o, key);
  }
  if (obj instanceof SafeString) return primitiveMember(obj.val, key);
  if (Array.isArray(obj)) {
    const m = typeof key === 'string' ? ARRAY_METHODS.get(key) : undefined;
    if (m) return new BoundMethod(obj, m, key as string);
  }
  if (obj instanceof BoundMethod) deny(key, 'it belongs to a method');
  if (key in obj || key in OBJECT_PROTO) deny(key, 'it is not a field of this value');
  return undefined;
}

function primitiveMember(v: string | number | boolean, key: string | number): unknown {
  if (typeof v === 'string') {
    if (key === 'length') return v.length;
    if (typeof key === 'number' || INDEX.test(key)) return v[key as number];
    const m = STRING_METHODS.get(key);
    if (m) return new BoundMethod(v, m, key);
    if (key in String.prototype)
      deny(key, `strings offer only the methods ${[...STRING_METHODS.keys()].join(', ')}`);
    return undefined;
  }
  if (typeof v === 'number' && typeof key === 'string') {
    const m = NUMBER_METHODS.get(key);
    if (m) return new BoundMethod(v, m, key);
  }
  if (
    key in OBJECT_PROTO ||
    (typeof key === 'string' && (key in Number.prototype || key in Boolean.prototype))
  )
    deny(key, 'it is not a field of this value');
  return undefined;
}

/** `obj.key` / `obj[key]` in a template: own data only. */
export function memberLookup(obj: unknown, key: unknown): unknown {
  if (obj === undefined || obj === null) return undefined;
  if (typeof key !== 'string' && typeof key !== 'number') {
    if (key instanceof SafeString) key = key.val;
    else
      deny(Array.isArray(key) ? `[${String(key)}]` : String(key), 'a subscript must be a string or a number');
  }
  const k = key as string | number;
  switch (typeof obj) {
    case 'object':
      return objectMember(obj, k);
    case 'string':
    case 'number':
    case 'boolean':
      return primitiveMember(obj, k);
    case 'function':
      return deny(k, 'it is a property of a function');
    default:
      return deny(k, `${typeof obj} values have no fields`);
  }
}

// Installed once per nunjucks runtime (see SandboxShared).
if (!shared.installed) {
  shared.installed = true;
  const originalMakeMacro = runtime.makeMacro;
  const originalSuppress = runtime.suppressValue;

  runtime.memberLookup = memberLookup;

  runtime.callWrap = function guardedCall(
    obj: unknown,
    name: string,
    context: unknown,
    args: unknown[],
  ): unknown {
    if (typeof obj === 'function') {
      if (isCallable(obj)) return (obj as Fn).apply(context, args);
      refuse(`"${name}" cannot be called in templates`, name);
    }
    if (obj instanceof BoundMethod) return obj.invoke(args);
    if (!obj) throw new Error(`Unable to call \`${name}\`, which is undefined or falsey`);
    throw new Error(`Unable to call \`${name}\`, which is not a function`);
  };

  // Top-level names: the render's variables and the globals, own properties only, so `{{ constructor }}`
  // or `{{ toString }}` never reach Object.prototype.
  runtime.contextOrFrameLookup = function guardedName(context, frame, name): unknown {
    const v = frame.lookup(name);
    if (v !== undefined) return v;
    const vars = context.ctx;
    if (hasOwn.call(vars, name)) return vars[name];
    const globals = context.env.globals;
    return hasOwn.call(globals, name) ? globals[name] : undefined;
  };

  // Macros and `caller` run template code, so templates may call them.
  runtime.makeMacro = function registeredMacro(argNames, kwargNames, func) {
    return allowCall(originalMakeMacro(argNames, kwargNames, func));
  };

  runtime.suppressValue = function jsonAwareSuppress(val: unknown, autoescape: boolean): unknown {
    if (val !== null && typeof val === 'object' && !(val instanceof SafeString)) {
      if (val instanceof BoundMethod) refuse('a method cannot be printed, only called', 'method');
      // Objects and arrays print as JSON, not "[object Object]": structured outputs stay readable in prompts.
      return counted(originalSuppress(JSON.stringify(val), autoescape));
    }
    if (typeof val === 'function') refuse('a function cannot be printed, only called', 'function');
    return counted(originalSuppress(val, autoescape));
  };

  // `a ~ b` is a call, not JavaScript's `+`, so that the text it builds is measured as it grows.
  (runtime as unknown as Record<string, unknown>).cappedConcat = function cappedConcat(
    a: unknown,
    b: unknown,
  ): string {
    const s = `${a}${b}`;
    if (s.length > renderState.limit) tooLongText('a text joined with ~', s.length);
    return s;
  };
  const compiler = (nunjucks as unknown as { compiler: { Compiler: { prototype: Record<string, unknown> } } })
    .compiler.Compiler.prototype;
  compiler.compileConcat = function compileConcat(
    this: { _emit(s: string): void; compile(n: unknown, f: unknown): void },
    node: { left: unknown; right: unknown },
    frame: unknown,
  ): void {
    this._emit('runtime.cappedConcat(');
    this.compile(node.left, frame);
    this._emit(', ');
    this.compile(node.right, frame);
    this._emit(')');
  };
}

/** Counts printed text against the render's limit (strings only: numbers and booleans are short). */
function counted(v: unknown): unknown {
  if (typeof v === 'string') {
    const state = renderState;
    state.printed += v.length;
    if (state.printed > state.limit) tooLongText('the rendered text', state.printed);
  }
  return v;
}
