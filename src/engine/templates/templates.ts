import nunjucks from 'nunjucks';
import { type ErrorContext, HatcheryError } from '../../core/errors.js';
import { templateEnv } from './env.js';
import { type Plan, planOf, renderPlan } from './fast.js';
import { renderState } from './sandbox.js';

/** What every template sees: the run's ctx, node outputs by name, and `fread`. */
export interface TemplateVars {
  ctx: Record<string, unknown>;
  out: Record<string, unknown>;
  fread: (path: string) => string;
  [extra: string]: unknown;
}

export { templateEnv } from './env.js';
export { raiseInTemplate } from './sandbox.js';

const TAG = /\{\{|\{%|\{#/;

/** True when `source` has a tag ({{, {% or {#}: text without one is the same text at every run. */
export function hasTemplateTags(source: string): boolean {
  return TAG.test(source);
}

/** A template compiled once at load time; `render` is cheap and never re-parses. */
export class Template {
  readonly source: string;
  readonly where: ErrorContext;
  private readonly compiled: nunjucks.Template | undefined;
  /** The fast path's plan (fast.ts): made on the first render, null when the template needs nunjucks. */
  private plan: Plan | null | undefined;

  constructor(source: string, where: ErrorContext) {
    this.source = source;
    this.where = where;
    // Text without any tag is returned as is; this skips nunjucks entirely for constant prompts.
    if (!TAG.test(source)) {
      this.compiled = undefined;
      return;
    }
    try {
      this.compiled = new nunjucks.Template(source, templateEnv, where.field ?? 'template', true);
    } catch (err) {
      const at = syntaxPosition(source, err);
      throw new HatcheryError(
        'TEMPLATE',
        `template syntax error at line ${at.line}, column ${at.column} of the template: ${cleanMessage(err, true)}`,
        { ...where, line: at.line, column: at.column },
        { cause: err },
      );
    }
  }

  /** Renders with the given variables; errors name the node, the field and the variable. */
  render(vars: TemplateVars): string {
    // Text and plain `{{ a.b }}` lookups (most prompts) skip nunjucks; anything else falls through.
    if (this.plan === undefined) this.plan = planOf(this.source);
    if (this.plan !== null) {
      const fast = renderPlan(this.plan, vars);
      if (fast !== undefined) return fast;
    }
    if (this.compiled === undefined) return this.source;
    const state = renderState;
    state.pending = undefined;
    state.fread = vars.fread;
    state.ctx = vars.ctx;
    state.out = vars.out;
    state.loaded = undefined;
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
 * The 1-based position of a syntax error in the template: nunjucks' own when it gives one, else the
 * last tag opened (errors at the end of the text, like an unclosed `{{`, come without a position).
 */
function syntaxPosition(source: string, err: unknown): { line: number; column: number } {
  const msg = err instanceof Error ? err.message : String(err);
  const pos = /\[Line (\d+), Column (\d+)\]/.exec(msg);
  if (pos) return { line: Number(pos[1]), column: Number(pos[2]) };
  const open = Math.max(source.lastIndexOf('{{'), source.lastIndexOf('{%'), source.lastIndexOf('{#'));
  const before = source.slice(0, Math.max(0, open));
  const line = before.split('\n').length;
  return { line, column: open < 0 ? 1 : open - before.lastIndexOf('\n') };
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
  const text = source.split('\n')[line - 1] ?? '';
  const start = text.lastIndexOf('{{', Math.max(0, column - 1) + 1);
  const from = start >= 0 ? start : column - 1;
  const rest = source
    .split('\n')
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
