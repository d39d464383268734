import nunjucks from 'nunjucks';
import { type ErrorContext, HatcheryError } from '../../core/errors.js';
import { templateEnv } from './env.js';
import { unknownName } from './names.js';
import { renderState } from './sandbox.js';
import { type Plan, planOf, renderPlan, type SimpleTag, simpleTags } from './simple.js';

/** What every template sees: the run's ctx, node outputs by name, and `fread`. */
export interface TemplateVars {
  ctx: Record<string, unknown>;
  out: Record<string, unknown>;
  fread: (path: string) => string;
  [extra: string]: unknown;
}

export { templateEnv } from './env.js';
export { raiseInTemplate, renderState, setTemplateTextLimit } from './sandbox.js';

const TAG = /\{\{|\{%|\{#/;

/** True when `source` has a tag ({{, {% or {#}: text without one is the same text at every run. */
export function hasTemplateTags(source: string): boolean {
  return TAG.test(source);
}

/** The parts of nunjucks a load-time parse needs (its typings do not declare them). */
const nj = nunjucks as unknown as {
  parser: { parse(src: string, extensions: unknown, opts: unknown): unknown };
  lib: {
    _prettifyError(path: string, withInternals: boolean, err: unknown): Error;
    TemplateError: new (message: string, lineno: number, colno: number) => Error;
  };
};

/** A node of nunjucks' parse tree, as far as the check below reads it. */
interface TreeNode {
  typename: string;
  lineno: number;
  colno: number;
  value?: unknown;
  children?: unknown[];
  fields?: string[];
  [field: string]: unknown;
}

function isTreeNode(v: unknown): v is TreeNode {
  return v !== null && typeof v === 'object' && typeof (v as TreeNode).typename === 'string';
}

/** The test an `is` names: `x is odd`, `x is divisibleby(3)`, and `x is none` (a literal). */
function testName(right: unknown): string | undefined {
  if (!isTreeNode(right)) return undefined;
  if (right.typename === 'Symbol' || right.typename === 'Literal') return String(right.value);
  if (right.typename === 'FunCall' && isTreeNode(right.name)) return String(right.name.value);
  return undefined;
}

/**
 * What nunjucks' compiler would reject in a template that parses: a dict key that is neither a name
 * nor a string, a `set` target or macro argument that is not a plain name; and what its render would
 * reject whatever the data: a filter or a test the environment lacks. Checked on the load parse, so
 * these stay load problems although templates are compiled only when first rendered.
 */
function compileOnlyError(tree: unknown): { message: string; node: TreeNode } | undefined {
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const n = stack.pop();
    if (Array.isArray(n)) {
      for (const x of n) stack.push(x);
      continue;
    }
    if (!isTreeNode(n)) continue;
    if (n.typename === 'Filter' || n.typename === 'FilterAsync') {
      const bad = isTreeNode(n.name) ? unknownName('filter', String(n.name.value)) : undefined;
      if (bad) return { message: bad, node: n.name as TreeNode };
    } else if (n.typename === 'Is') {
      const name = testName(n.right);
      const bad = name === undefined ? undefined : unknownName('test', name);
      if (bad) return { message: bad, node: n.right as TreeNode };
    } else if (n.typename === 'Pair') {
      const key = n.key;
      if (
        isTreeNode(key) &&
        key.typename !== 'Symbol' &&
        !(key.typename === 'Literal' && typeof key.value === 'string')
      )
        return { message: 'compilePair: Dict keys must be strings or names', node: key };
    } else if (n.typename === 'Set') {
      for (const t of (n.targets as unknown[]) ?? [])
        if (isTreeNode(t) && t.typename !== 'Symbol')
          return { message: 'set: only a plain name can be assigned, not an attribute or an item', node: t };
    } else if (n.typename === 'Macro' || n.typename === 'Caller') {
      const args = (isTreeNode(n.args) ? n.args.children : undefined) ?? [];
      args.forEach((a, i) => {
        if (
          isTreeNode(a) &&
          a.typename !== 'Symbol' &&
          !(i === args.length - 1 && (a.typename === 'Dict' || a.typename === 'KeywordArgs'))
        )
          throw new nj.lib.TemplateError('macro arguments must be names', a.lineno + 1, a.colno + 1);
      });
    }
    if (Array.isArray(n.children)) stack.push(n.children);
    for (const f of n.fields ?? []) stack.push(n[f]);
  }
  return undefined;
}
const envParts = templateEnv as unknown as { extensionsList: unknown; opts: unknown };

/**
 * A template parsed at load time (so a syntax error is a load problem) and compiled to JavaScript on
 * its first render: compiling every template of every served file up front was a fifth of start-up.
 * `render` is cheap after the first call and never re-parses.
 */
export class Template {
  readonly source: string;
  readonly where: ErrorContext;
  /** Parse tree kept for the load-time analysis until it takes it (see takeTree). */
  private tree: unknown;
  private program: nunjucks.Template | undefined;
  private readonly constant: boolean;
  /** The fast path's plan (simple.ts), null when the template needs nunjucks. */
  private readonly plan: Plan | null = null;

  constructor(source: string, where: ErrorContext) {
    this.source = source;
    this.where = where;
    // Text without any tag is returned as is; this skips nunjucks entirely for constant prompts.
    this.constant = !TAG.test(source);
    if (this.constant) return;
    // Text and simple tags (simple.ts) always parse: no parse tree, and the load-time analysis reads
    // their variables from the text (loader/analysis).
    const simple = simpleTags(source);
    if (simple !== null) {
      this.checkFilters(simple);
      this.plan = planOf(source, simple);
      return;
    }
    try {
      // The parse nunjucks' own compile starts with (same extensions and options), so it fails alike.
      this.tree = nj.parser.parse(source, envParts.extensionsList, envParts.opts);
      const bad = compileOnlyError(this.tree);
      // 1-based, as nunjucks' compiler gives its own positions.
      if (bad) throw new nj.lib.TemplateError(bad.message, bad.node.lineno + 1, bad.node.colno + 1);
    } catch (err) {
      throw this.syntaxError(nj.lib._prettifyError(this.path, false, err));
    }
  }

  /** Refuses a filter the environment lacks in simple tags (the parsed ones: compileOnlyError). */
  private checkFilters(tags: readonly SimpleTag[]): void {
    for (const tag of tags) {
      for (const name of tag.filters) {
        const bad = unknownName('filter', name);
        if (bad === undefined) continue;
        // The filter's own position: its first `| name` after the tag's variable.
        const found = new RegExp(`\\|\\s*${name}\\b`).exec(this.source.slice(tag.at));
        const at = tag.at + (found ? found.index + found[0].length - name.length : 0);
        const { line, column } = lineColumn(this.source, at);
        throw this.syntaxError(
          nj.lib._prettifyError(this.path, false, new nj.lib.TemplateError(bad, line, column)),
        );
      }
    }
  }

  /**
   * The parse tree of the constructor's parse, handed over once (later calls get undefined): the
   * load-time analysis reads it instead of parsing the template a second time.
   */
  takeTree(): unknown {
    const tree = this.tree;
    this.tree = undefined;
    return tree;
  }

  /** The compiled template (compiled now on first use); undefined for text without tags. */
  private get compiled(): nunjucks.Template | undefined {
    if (this.program !== undefined || this.constant) return this.program;
    this.tree = undefined;
    try {
      this.program = new nunjucks.Template(this.source, templateEnv, this.path, true);
    } catch (err) {
      // Nunjucks rejects a few parsed constructs only when it compiles them (e.g. a number as a dict key).
      throw this.syntaxError(err);
    }
    return this.program;
  }

  private get path(): string {
    return this.where.field ?? 'template';
  }

  private syntaxError(err: unknown): HatcheryError {
    const at = syntaxPosition(this.source, err);
    return new HatcheryError(
      'TEMPLATE',
      `template syntax error at line ${at.line}, column ${at.column} of the template: ${cleanMessage(err, true)}`,
      { ...this.where, line: at.line, column: at.column },
      { cause: err },
    );
  }

  /** Renders with the given variables; errors name the node, the field and the variable. */
  render(vars: TemplateVars): string {
    if (this.constant) return this.source;
    // Text and plain `{{ a.b }}` lookups (most prompts) skip nunjucks; anything else falls through.
    const plan = this.plan;
    if (plan !== null) {
      const fast = renderPlan(plan, vars);
      if (fast !== undefined) return fast;
    }
    if (this.compiled === undefined) return this.source;
    const state = renderState;
    state.pending = undefined;
    state.fread = vars.fread;
    state.ctx = vars.ctx;
    state.out = vars.out;
    state.loaded = undefined;
    state.printed = 0;
    try {
      return this.compiled.render(vars);
    } catch (err) {
      const own = state.pending;
      if (own !== undefined) {
        state.pending = undefined;
        if (own instanceof HatcheryError) {
          for (const [k, v] of Object.entries(this.where))
            if (own.context[k] === undefined) own.context[k] = v;
          throw own;
        }
        // Raised by another copy of this package sharing the sandbox: same error, this copy's class.
        if (isHatcheryErrorLike(own)) {
          throw new HatcheryError(own.code, own.message, { ...this.where, ...own.context }, { cause: own });
        }
      }
      throw this.translate(err);
    } finally {
      // Renders never nest (helpers do not render), so the slots simply empty; nothing of the run stays referenced.
      state.fread = state.ctx = state.out = state.loaded = undefined;
    }
  }

  private translate(err: unknown): HatcheryError {
    const msg = err instanceof Error ? err.message : String(err);
    const inner = partialError(msg, this.path);
    if (inner) {
      // Positions are the partial's: reported against it, not against this template's source.
      const at = inner.line ? ` at line ${inner.line}, column ${inner.column}` : '';
      return new HatcheryError(
        'TEMPLATE',
        `template error in partial "${inner.name}"${at}: ${inner.message}; fix that file (it is loaded by {% include %}, {% import %} or {% extends %})`,
        { ...this.where, partial: inner.name, ...(inner.line ? { line: inner.line } : {}) },
        { cause: err },
      );
    }
    const pos = /\[Line (\d+), Column (\d+)\]/.exec(msg);
    if (msg.includes('attempted to output null or undefined value') && pos) {
      const expr = expressionAt(this.source, Number(pos[1]), Number(pos[2]));
      return new HatcheryError(
        'UNDEFINED_VARIABLE',
        `undefined variable \`${expr}\` (line ${pos[1]}). Define it (declared input, files entry, save_output of an earlier node) or give a default: {{ ${expr} | default("") }}`,
        { ...this.where, variable: expr },
        { cause: err },
      );
    }
    if (msg.includes('Maximum call stack size exceeded'))
      return new HatcheryError(
        'TEMPLATE',
        'templates nest too deeply: does a macro call itself without end?',
        this.where,
        { cause: err },
      );
    return new HatcheryError('TEMPLATE', `template error: ${cleanMessage(err)}`, this.where, { cause: err });
  }
}

/**
 * The innermost partial a nunjucks error happened in, when it happened in one: nunjucks nests a
 * `Template render error: (name) [Line l, Column c]` header per template the error passed through,
 * and names the including template `own` (its field).
 */
function partialError(
  msg: string,
  own: string,
): { name: string; line?: number; column?: number; message: string } | undefined {
  const heads = [...msg.matchAll(/Template render error: \(([^)\n]*)\)(?: \[Line (\d+), Column (\d+)\])?/g)];
  const last = heads[heads.length - 1];
  if (last === undefined || last[1] === own) return undefined;
  const message = msg
    .slice((last.index ?? 0) + last[0].length)
    .replace(/^\s*Error:\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return {
    name: last[1]!,
    ...(last[2] ? { line: Number(last[2]), column: Number(last[3]) } : {}),
    message,
  };
}

/**
 * The 1-based position of a syntax error in the template: nunjucks' own when it gives one, else the
 * last tag opened (errors at the end of the text, like an unclosed `{{`, come without a position).
 */
function syntaxPosition(source: string, err: unknown): { line: number; column: number } {
  const msg = err instanceof Error ? err.message : String(err);
  const pos = /\[Line (\d+), Column (\d+)\]/.exec(msg);
  if (pos) return { line: Number(pos[1]), column: Number(pos[2]) };
  const open = Math.max(source.lastIndexOf('{{'), source.lastIndexOf('{%'), source.lastIndexOf('{#'));
  return open < 0 ? { line: 1, column: 1 } : lineColumn(source, open);
}

/** The 1-based line and column of offset `at` in `source`. */
function lineColumn(source: string, at: number): { line: number; column: number } {
  const before = source.slice(0, at);
  return { line: before.split('\n').length, column: at - before.lastIndexOf('\n') };
}

function cleanMessage(err: unknown, dropPosition = false): string {
  const msg = err instanceof Error ? err.message : String(err);
  const text = msg.replace(/^\([^)]*\)\s*/, '');
  // A syntax error's position is said in words before the message.
  return (dropPosition ? text.replace(/^\[Line \d+, Column \d+\]\s*/, '') : text)
    .replace(/^\s*Error:\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The expression of the `{{ ... }}` tag that starts at the given 1-based line and column. */
function expressionAt(source: string, line: number, column: number): string {
  const lines = source.split('\n');
  const start = (lines[line - 1] ?? '').lastIndexOf('{{', Math.max(0, column - 1) + 1);
  const from = start >= 0 ? start : column - 1;
  const rest = lines
    .slice(line - 1)
    .join('\n')
    .slice(from + 2);
  const end = rest.indexOf('}}');
  const expr = (end >= 0 ? rest.slice(0, end) : rest).trim();
  return expr.replace(/^-\s*|\s*-$/g, '') || '?';
}

function isHatcheryErrorLike(err: unknown): err is HatcheryError {
  return (
    err instanceof Error &&
    err.name === 'HatcheryError' &&
    typeof (err as { code?: unknown }).code === 'string' &&
    typeof (err as { context?: unknown }).context === 'object'
  );
}
