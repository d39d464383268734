/**
 * The variables a template reads, found from the Nunjucks parse tree (never by regex): `ctx.<name>`,
 * `out.<node>` and bare names, each with its position and whether the template already copes with
 * its absence (a default, an `is defined` test, an enclosing `if` on it, `x or "..."`).
 */
import nunjucks from 'nunjucks';
import { type SimpleTag, simpleTags } from '../../engine/templates/simple.js';
import { lookupExpr } from '../../schema/names.js';

/** One variable a template reads. */
export interface TemplateRef {
  /** `ctx.<name>`, `out.<name>`, or a bare top-level name. */
  readonly kind: 'ctx' | 'out' | 'bare';
  readonly name: string;
  /** The expression as a user would write it: `ctx.topic`, `out["My node"]`, `topic`. */
  readonly expr: string;
  /** 1-based position in the template. */
  readonly line: number;
  readonly column: number;
  /**
   * True when an undefined value does no harm here: the template gives a default, tests it
   * (`if`, `is defined`, `or`), or only iterates over it (`for x in ctx.list` runs zero times).
   */
  readonly soft: boolean;
}

/** Names every template may read without defining them (the render's variables and the env's globals). */
const ALWAYS = new Set([
  'ctx',
  'out',
  'fread',
  'range',
  'cycler',
  'joiner',
  'loop',
  'caller',
  'super',
  'varargs',
  'kwargs',
]);

type AstNode = {
  typename: string;
  lineno: number;
  colno: number;
  value?: unknown;
  children?: AstNode[];
  fields?: string[];
  [field: string]: unknown;
};

function isNode(v: unknown): v is AstNode {
  return v !== null && typeof v === 'object' && typeof (v as AstNode).typename === 'string';
}

/** The children of a node: a NodeList's list, else the values of its fields (arrays flattened). */
function kids(n: AstNode): AstNode[] {
  if (Array.isArray(n.children)) return n.children;
  const list: AstNode[] = [];
  for (const f of n.fields ?? []) {
    const v = n[f];
    if (isNode(v)) list.push(v);
    else if (Array.isArray(v)) for (const x of v) if (isNode(x)) list.push(x);
  }
  return list;
}

/** Names a template defines itself: set, for, macro (and its arguments), import targets. */
function localNames(root: AstNode): Set<string> {
  const names = new Set<string>();
  const addSymbols = (v: unknown) => {
    if (isNode(v) && v.typename === 'Symbol') names.add(String(v.value));
    else if (isNode(v)) for (const k of kids(v)) addSymbols(k);
    else if (Array.isArray(v)) for (const x of v) addSymbols(x);
  };
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    switch (n.typename) {
      case 'Set':
        addSymbols(n.targets);
        break;
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll':
        addSymbols(n.name);
        break;
      case 'Macro':
      case 'Caller': {
        addSymbols(n.name);
        const args = n.args as AstNode | undefined;
        for (const a of args ? kids(args) : []) {
          if (a.typename === 'Symbol') names.add(String(a.value));
          else if (a.typename === 'KeywordArgs') for (const p of kids(a)) addSymbols(p.key);
        }
        break;
      }
      case 'Import':
        addSymbols(n.target);
        break;
      case 'FromImport':
        for (const x of kids(n.names as AstNode)) {
          if (x.typename === 'Pair') addSymbols(x.value);
          else addSymbols(x);
        }
        break;
    }
    stack.push(...kids(n));
  }
  return names;
}

/** A ref at a 1-based position of the template. */
function refAt(
  kind: TemplateRef['kind'],
  name: string,
  line: number,
  column: number,
  soft: boolean,
): TemplateRef {
  return { kind, name, expr: kind === 'bare' ? name : lookupExpr(kind, name), line, column, soft };
}

/** Reads the refs of one parsed template. */
class Collector {
  readonly refs: TemplateRef[] = [];
  private readonly locals: Set<string>;
  private readonly extras: ReadonlySet<string>;
  /** `ctx`/`out` rebound by the template itself: its lookups are not the run's variables. */
  private readonly shadowed: boolean;

  constructor(root: AstNode, extras: ReadonlySet<string>) {
    this.locals = localNames(root);
    this.extras = extras;
    this.shadowed = this.locals.has('ctx') || this.locals.has('out');
  }

  /** Keys (`ctx.x`, `out.N`, bare `x`) an expression mentions: what an `if` on it guards. */
  keysOf(n: AstNode): Set<string> {
    const keys = new Set<string>();
    const sub = new Collector({ typename: 'Root', lineno: 0, colno: 0, children: [] }, this.extras);
    sub.visit(n, true, new Set());
    for (const r of sub.refs) keys.add(`${r.kind}:${r.name}`);
    // Bare names the sub-collector dropped as locals still guard themselves.
    return keys;
  }

  private add(kind: TemplateRef['kind'], name: string, at: AstNode, soft: boolean, guards: Set<string>) {
    this.refs.push(refAt(kind, name, at.lineno + 1, at.colno + 1, soft || guards.has(`${kind}:${name}`)));
  }

  visit(n: AstNode, soft: boolean, guards: Set<string>): void {
    switch (n.typename) {
      case 'Symbol': {
        const name = String(n.value);
        if (ALWAYS.has(name) || this.locals.has(name) || this.extras.has(name)) return;
        this.add('bare', name, n, soft, guards);
        return;
      }
      case 'LookupVal': {
        const vals: AstNode[] = [];
        let t: AstNode = n;
        while (t.typename === 'LookupVal') {
          vals.push(t.val as AstNode);
          t = t.target as AstNode;
        }
        const first = vals.pop()!;
        const root = t.typename === 'Symbol' ? String(t.value) : undefined;
        if ((root === 'ctx' || root === 'out') && !this.shadowed) {
          const key = first.typename === 'Literal' ? first.value : undefined;
          if (typeof key === 'string' || typeof key === 'number')
            this.add(root, String(key), t, soft, guards);
          else this.visit(first, soft, guards);
        } else {
          this.visit(t, soft, guards);
          this.visit(first, soft, guards);
        }
        for (const v of vals) this.visit(v, soft, guards);
        return;
      }
      case 'Filter':
      case 'FilterAsync': {
        const name = isNode(n.name) ? String(n.name.value) : '';
        const args = kids(n.args as AstNode);
        const defaults = name === 'default' || name === 'd';
        args.forEach((a, i) => {
          this.visit(a, soft || (defaults && i === 0), guards);
        });
        return;
      }
      case 'If':
      case 'IfAsync':
      case 'InlineIf': {
        const cond = n.cond as AstNode;
        this.visit(cond, true, guards);
        const inner = new Set([...guards, ...this.keysOf(cond)]);
        if (isNode(n.body)) this.visit(n.body, soft, inner);
        if (isNode(n.else_)) this.visit(n.else_, soft, inner);
        return;
      }
      case 'Or':
        this.visit(n.left as AstNode, true, guards);
        this.visit(n.right as AstNode, soft, guards);
        return;
      case 'And': {
        const left = n.left as AstNode;
        this.visit(left, soft, guards);
        this.visit(n.right as AstNode, soft, new Set([...guards, ...this.keysOf(left)]));
        return;
      }
      case 'Is': {
        this.visit(n.left as AstNode, true, guards);
        const right = n.right as AstNode;
        // The test's name is not a variable; a test with arguments (`divisibleby(3)`) has them read.
        if (right.typename === 'FunCall') this.visit(right.args as AstNode, soft, guards);
        return;
      }
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll':
        this.visit(n.arr as AstNode, true, guards);
        if (isNode(n.body)) this.visit(n.body, soft, guards);
        if (isNode(n.else_)) this.visit(n.else_, soft, guards);
        return;
      case 'Set':
        if (isNode(n.value)) this.visit(n.value, soft, guards);
        if (isNode(n.body)) this.visit(n.body, soft, guards);
        return;
      case 'Macro':
      case 'Caller': {
        const args = n.args as AstNode | undefined;
        for (const a of args ? kids(args) : [])
          if (a.typename === 'KeywordArgs')
            for (const p of kids(a)) this.visit(p.value as AstNode, soft, guards);
        if (isNode(n.body)) this.visit(n.body, soft, guards);
        return;
      }
      case 'Pair':
      case 'KeywordArgs':
        // Dict keys and keyword names are names, not variables.
        if (n.typename === 'Pair') {
          if (isNode(n.key) && n.key.typename !== 'Symbol') this.visit(n.key, soft, guards);
          this.visit(n.value as AstNode, soft, guards);
        } else for (const p of kids(n)) this.visit(p, soft, guards);
        return;
      case 'Import':
      case 'FromImport':
      case 'Include':
      case 'Extends':
        this.visit(n.template as AstNode, soft, guards);
        return;
      case 'Super':
        return;
      case 'Block':
        if (isNode(n.body)) this.visit(n.body, soft, guards);
        return;
      default:
        for (const k of kids(n)) this.visit(k, soft, guards);
    }
  }
}

/** A parse failure with its 1-based position in the template, when nunjucks knows it. */
export interface TemplateSyntax {
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/**
 * The variables `source` reads; `extras` are names the node kind adds to the render (e.g. `branches`
 * in a parallel's join); `tree` is its parse tree when the caller parsed it already (see
 * Template.takeTree). Returns a syntax problem instead when the template does not parse.
 */
export function templateRefs(
  source: string,
  extras: ReadonlySet<string> = new Set(),
  tree?: unknown,
): TemplateRef[] | TemplateSyntax {
  let root: AstNode;
  const tags = tree === undefined ? simpleTags(source) : null;
  if (tags !== null) return simpleRefs(tags, source, extras);
  if (isNode(tree)) root = tree;
  else
    try {
      root = (nunjucks as unknown as { parser: { parse(s: string): AstNode } }).parser.parse(source);
    } catch (err) {
      const e = err as { message?: string; lineno?: number; colno?: number };
      return { message: String(e.message ?? err), line: e.lineno, column: e.colno };
    }
  const c = new Collector(root, extras);
  c.visit(root, false, new Set());
  return c.refs;
}

/** The ref a simple tag's expression reads (kind and name), if it reads one. */
function simpleRef(
  tag: SimpleTag,
  extras: ReadonlySet<string>,
): { kind: TemplateRef['kind']; name: string } | undefined {
  const name = tag.name;
  if (name === 'ctx' || name === 'out')
    return tag.keys.length === 0 ? undefined : { kind: name, name: String(tag.keys[0]) };
  return ALWAYS.has(name) || extras.has(name) ? undefined : { kind: 'bare', name };
}

/**
 * The refs of a template of text and simple tags (engine/templates/simple.ts), read from the text:
 * Template does not parse such a template, as it always parses. The same refs, in the same order,
 * at the same positions and equally soft as the tree gives: in an `{% if %}` condition, under a
 * `default` filter, or inside an `{% if %}` (or its else) on the same variable.
 */
function simpleRefs(tags: readonly SimpleTag[], source: string, extras: ReadonlySet<string>): TemplateRef[] {
  const refs: TemplateRef[] = [];
  let line = 1;
  let lineStart = 0;
  for (const tag of tags) {
    const ref = simpleRef(tag, extras);
    if (!ref) continue;
    for (let i = source.indexOf('\n', lineStart); i >= 0 && i < tag.at; i = source.indexOf('\n', i + 1)) {
      line++;
      lineStart = i + 1;
    }
    const guarded = tag.guards.some((g) => {
      const r = simpleRef(g, extras);
      return r !== undefined && r.kind === ref.kind && r.name === ref.name;
    });
    const soft = tag.cond || guarded || tag.filters.some((f) => f === 'default' || f === 'd');
    refs.push(refAt(ref.kind, ref.name, line, tag.at - lineStart + 1, soft));
  }
  return refs;
}
