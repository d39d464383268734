/**
 * Known Nunjucks/Jinja sandbox escapes, each as one template. Every form tries to read the canary
 * environment variable or to run a shell command that creates the marker file; the tests assert that
 * none does, whatever way the template is run.
 */

/** Name of the environment variable whose value must never appear in any output. */
export const CANARY_VAR = 'HATCHERY_CANARY_SECRET';
/** The canary's value (planted in the environment of every process that runs the corpus). */
export const CANARY = 'canary-7f3a91c2-do-not-print';
/** Name of the environment variable holding the path a successful shell escape would create. */
export const MARKER_VAR = 'HATCHERY_CANARY_MARKER';

const P = `'return process.env.${CANARY_VAR}'`;
const X = `'return process.getBuiltinModule("child_process").execSync("echo pwned > " + process.env.${MARKER_VAR}).toString()'`;

/** How a form must end: refused with a TEMPLATE error (message matching), undefined, or a harmless output. */
export type Expect = { deny: RegExp } | { undefinedVariable: true } | { output: RegExp };

const ACCESS = { deny: /cannot be accessed in templates/ };
const SUBSCRIPT = { deny: /a subscript must be a string or a number/ };
const CALL = { deny: /Unable to call `/ };

/** [template, expected outcome]; at least 30 forms. */
export const CORPUS: [string, Expect][] = [
  // Subscripts: lists, computed strings, variables
  [`{{ range[["constructor"]](${P})() }}`, SUBSCRIPT],
  [`{% set k = ["constructor"] %}{{ range[k](${X})() }}`, SUBSCRIPT],
  [`{{ range["constructor"](${P})() }}`, ACCESS],
  [`{{ range.constructor(${X})() }}`, ACCESS],
  [`{{ range["constr" + "uctor"](${P})() }}`, ACCESS],
  [`{{ range["constr" ~ "uctor"](${X})() }}`, ACCESS],
  [`{% set c = "constructor" %}{{ cycler[c][c](${P})() }}`, ACCESS],
  [`{% set p = "__proto__" %}{{ ctx.input[p].constructor.constructor(${X})() }}`, ACCESS],
  [`{{ ctx.input[("constructor" | safe)].constructor(${P})() }}`, ACCESS],
  // The globals and what they return
  [`{{ cycler().next.constructor(${P})() }}`, ACCESS],
  [`{{ cycler("a").reset["constructor"](${X})() }}`, ACCESS],
  [`{{ joiner().constructor(${P})() }}`, ACCESS],
  [`{{ range(3).constructor.constructor(${P})() }}`, ACCESS],
  [`{{ range.prototype.constructor(${P}) }}`, ACCESS],
  [`{{ range.name }}`, ACCESS],
  [`{{ range(100000000) | length }}`, { deny: /range\(\) would make more than 100000 items/ }],
  // fread, directly and through ctx
  [`{{ fread.constructor(${P})() }}`, ACCESS],
  [`{{ ctx.fread.constructor(${X})() }}`, ACCESS],
  // constructor of data values
  [`{{ "".constructor.constructor(${P})() }}`, ACCESS],
  [`{{ ctx.input.constructor.constructor(${X})() }}`, ACCESS],
  [`{{ [].constructor.constructor(${P})() }}`, ACCESS],
  [`{% set d = {} %}{{ d.constructor.constructor(${P})() }}`, ACCESS],
  [`{{ (1).constructor.constructor(${P})() }}`, ACCESS],
  [`{{ ("x" | safe).constructor.constructor(${X})() }}`, ACCESS],
  [`{% for x in [1] %}{{ loop.constructor.constructor(${P})() }}{% endfor %}`, ACCESS],
  // Prototypes and getters
  [`{{ ctx.__proto__.constructor.constructor(${P})() }}`, ACCESS],
  [`{{ out["__proto__"]["constructor"]["constructor"](${X})() }}`, ACCESS],
  [`{{ ctx["__proto__"] }}`, ACCESS],
  [`{{ cycler.__proto__ }}`, ACCESS],
  [`{{ ctx.input.__lookupGetter__("length") }}`, ACCESS],
  [`{{ ctx.__defineGetter__("input", range) }}`, ACCESS],
  // Top-level names that live on Object.prototype
  [`{{ constructor.constructor(${P})() }}`, CALL],
  [`{{ toString.call.constructor(${P})() }}`, CALL],
  [`{{ toString }}`, { undefinedVariable: true }],
  [`{{ process.env.${CANARY_VAR} }}`, { undefinedVariable: true }],
  [`{{ global.process.env }}`, { undefinedVariable: true }],
  [`{{ require("child_process").execSync("id") }}`, CALL],
  // toString, call, apply, bind
  [`{{ range.toString() }}`, ACCESS],
  [`{{ ctx.input.toString.constructor(${P})() }}`, ACCESS],
  [`{{ range.call(null, 3) }}`, ACCESS],
  [`{{ range.constructor.call(null, ${P})() }}`, ACCESS],
  [`{{ range.constructor.apply(null, [${X}])() }}`, ACCESS],
  [`{{ range.constructor.bind(null, ${P})()() }}`, ACCESS],
  [`{{ range.caller }}`, ACCESS],
  // Macros and caller
  [`{% macro m() %}{{ caller.constructor(${P})() }}{% endmacro %}{% call m() %}x{% endcall %}`, ACCESS],
  [`{% macro m() %}x{% endmacro %}{{ m.constructor(${X})() }}`, ACCESS],
  [`{% macro m() %}{{ caller.caller }}{% endmacro %}{% call m() %}x{% endcall %}`, ACCESS],
  [`{% macro m() %}x{% endmacro %}{{ m.arguments }}`, ACCESS],
  [`{% macro m() %}{{ caller.apply(null, []) }}{% endmacro %}{% call m() %}x{% endcall %}`, ACCESS],
  [`{% set f = range %}{{ f.constructor(${P})() }}`, ACCESS],
  [`{{ caller() }}`, CALL],
  // Allow-listed methods cannot be taken apart or handed callbacks
  [`{{ ctx.input.split.constructor(${P})() }}`, ACCESS],
  [`{% set s = ctx.input.split %}{{ s.call }}`, ACCESS],
  [`{{ ctx.input.split("").constructor.constructor(${X})() }}`, ACCESS],
  [`{{ ctx.input.replace("h", range) }}`, { deny: /never take functions/ }],
  [`{{ ctx.input.replace(r/h/, cycler().next) }}`, { deny: /never take functions/ }],
  [`{{ ctx.input.codePointAt(0) }}`, { deny: /strings offer only the methods/ }],
  [`{{ [1, 2].map(range) }}`, ACCESS],
  // constructor through filters and tests
  [`{{ [range] | sort(attribute="constructor") | first }}`, ACCESS],
  [`{{ [ctx.input] | sort(attribute="constructor.constructor") }}`, ACCESS],
  [`{{ [range] | join(",", "constructor") }}`, ACCESS],
  [`{{ [range] | groupby("constructor") }}`, ACCESS],
  [`{{ [range] | sum("constructor") }}`, ACCESS],
  [`{{ [range] | selectattr("constructor") | length }}`, ACCESS],
  [`{{ [cycler] | rejectattr("__proto__") | length }}`, ACCESS],
  [`{{ ${P} | constructor }}`, { deny: /filter not found: constructor/ }],
  [`{{ range is constructor }}`, { deny: /test not found: constructor/ }],
  [`{{ ctx.input | replace(r/h/, range.constructor) }}`, ACCESS],
  [`{{ "x" | center(1000000000) }}`, { deny: /center: a size above 100000 is refused/ }],
  // Objects whose prototype a template sets (dict literals and keyword arguments named __proto__)
  [`{% set d = {"__proto__": range} %}{{ d.constructor(${P})() }}`, ACCESS],
  [`{% set d = {"__proto__": range} %}{{ d.call(null, 3) }}`, ACCESS],
  [`{% macro m(call) %}{{ call.constructor(${P})() }}{% endmacro %}{{ m(__proto__=range) }}`, ACCESS],
  [
    `{% macro m(call) %}{{ call(range, 3) }}{% endmacro %}{{ m(__proto__=range) }}`,
    { deny: /cannot be called in templates/ },
  ],
  [`{{ ctx.input.split(",", {"__proto__": range}) }}`, { deny: /methods take only strings/ }],
  // Functions as values: not printable; implicit conversions only reach registered functions
  [`{{ range }}`, { deny: /a function cannot be printed/ }],
  [`{% set d = {"toString": joiner()} %}[{{ d ~ "" }}]`, { output: /^\[\]$/ }],
  // Harmless reads: data only, never fread or anything of process
  [`{{ ctx | dictsort }}`, { output: /^\[\["input","hello"\]\]$/ }],
  [`{% for k, v in ctx %}{{ k }};{% endfor %}`, { output: /^input;$/ }],
];
