import { HatcheryError } from '../core/errors.js';
import type { CompileContext, NodeKindImpl, RunContext, Tool } from '../engine/contracts.js';
import { Template } from '../engine/templates/templates.js';
import type { BanelingDef } from '../schema/baneling.js';
import { checkToolArgs, loadTimeSchema, singleExpression } from '../tools/check-args.js';
import { checkToolRef, loadedSub } from '../tools/compile.js';
import { callToolRef } from '../tools/invoke.js';
import { writePathProblem } from '../tools/path-check.js';
import { approve } from './asking.js';

/**
 * A string argument that is exactly one `{{ expression }}`: rendered through the `dump` filter (JSON
 * of the value, inside the same sandbox as every template) so the tool gets the value's own type; a
 * string stays a string ("42" is dumped as "\"42\"").
 */
class ValueArg {
  constructor(
    readonly json: Template,
    /** The argument as written, rendered only to report an undefined variable in the author's words. */
    readonly source: Template,
  ) {}
}

/** A JSON value with every string compiled to a template (an object: its keys and compiled values). */
type ArgTree = Template | ValueArg | Map<string, ArgTree> | number | boolean | null | ArgTree[];

function compileArgs(value: unknown, field: string, cc: CompileContext, node: string): ArgTree {
  if (typeof value === 'string') {
    const source = cc.template(value, field);
    const expr = singleExpression(value);
    if (!source || expr === undefined) return source ?? null;
    // Built here, not through cc.template: the load-time analysis checks the argument as written
    // (`source`), and this derived text would report each variable twice, at shifted columns.
    let json: Template;
    try {
      json = new Template(`{{ (${expr}) | dump }}`, { file: cc.file, node, field });
    } catch {
      return source;
    }
    return new ValueArg(json, source);
  }
  if (Array.isArray(value)) return value.map((v, i) => compileArgs(v, `${field}/${i}`, cc, node));
  if (value && typeof value === 'object') {
    // "__proto__" (a JSON key) would set the rendered object's prototype: it is no argument.
    const keys = Object.keys(value).filter((k) => k !== '__proto__');
    return new Map(
      keys.map((k) => [k, compileArgs((value as Record<string, unknown>)[k], `${field}/${k}`, cc, node)]),
    );
  }
  return value as number | boolean | null;
}

function renderValue(arg: ValueArg, scope: RunContext): unknown {
  let text: string;
  try {
    text = scope.render(arg.json);
  } catch (err) {
    // An undefined value has no JSON: the argument as written names the variable in the error.
    scope.render(arg.source);
    throw err;
  }
  return JSON.parse(text) as unknown;
}

type Schema = Record<string, unknown> | undefined;

/** The sub-schema of a property or of array items, when the tool's schema gives one. */
function below(schema: Schema, key: 'properties' | 'items', name?: string): Schema {
  const sub = schema?.[key] as Record<string, unknown> | undefined;
  if (!sub || typeof sub !== 'object') return undefined;
  const s = name === undefined ? sub : Object.hasOwn(sub, name) ? sub[name] : undefined;
  return s && typeof s === 'object' ? (s as Record<string, unknown>) : undefined;
}

/**
 * Renders the arguments. A one-expression argument keeps its value's JSON type, unless the tool's
 * schema says that argument is a string: then it is the rendered text, as every other template.
 */
function renderArgs(tree: ArgTree, scope: RunContext, schema: Schema): unknown {
  if (tree === null || typeof tree !== 'object') return tree;
  if (Array.isArray(tree)) return tree.map((t) => renderArgs(t, scope, below(schema, 'items')));
  if (tree instanceof Template) return scope.render(tree);
  if (tree instanceof ValueArg) {
    return schema?.type === 'string' ? scope.render(tree.source) : renderValue(tree, scope);
  }
  const obj: Record<string, unknown> = {};
  for (const [k, v] of tree) obj[k] = renderArgs(v, scope, below(schema, 'properties', k));
  return obj;
}

/** Baneling: one static tool call with templated arguments; its output is the tool's text. */
export const banelingImpl: NodeKindImpl<BanelingDef> = {
  compile(def, base, cc) {
    const ref = checkToolRef(def.tool_name, 'tool_name', cc);
    const schema = ref ? loadTimeSchema(ref, loadedSub(ref)) : undefined;
    if (ref && schema) {
      for (const p of checkToolArgs(ref, def.tool_args ?? {}, schema))
        cc.problem(p.path ? `tool_args/${p.path}` : 'tool_args', p.message);
    }
    // A constant file to write is checked like write_output: refused now, before any model is paid.
    const target = (def.tool_args as { path?: unknown } | undefined)?.path;
    const roots = cc.options.roots;
    if (ref?.kind === 'builtin' && ref.name === 'write_file' && typeof target === 'string' && roots) {
      const why = writePathProblem(target, cc.dir, roots);
      if (why) cc.problem('tool_args/path', why);
    }
    const args = compileArgs(def.tool_args ?? {}, 'tool_args', cc, base.name);
    const render = (tool: Tool, scope: RunContext) =>
      renderArgs(args, scope, tool.inputSchema) as Record<string, unknown>;
    const argsOf = def.approve
      ? async (tool: Tool, scope: RunContext) => {
          const rendered = render(tool, scope);
          await approve(
            scope,
            base.name,
            `call tool "${tool.name}" (${def.tool_name}) with arguments ${JSON.stringify(rendered)}`,
          );
          return rendered;
        }
      : render;
    const toolName = def.tool_name;
    return {
      ...base,
      exec: async (scope) => {
        if (!ref)
          throw new HatcheryError('UNKNOWN_TOOL', `unknown tool "${toolName}"`, { field: 'tool_name' });
        const res = await callToolRef(scope, base.name, ref, argsOf, def.timeout_ms);
        if (res.isError) {
          throw new HatcheryError('TOOL', `tool "${toolName}" failed: ${res.text}`, {
            field: 'tool_name',
            tool: toolName,
          });
        }
        return { text: res.text };
      },
    };
  },
};
