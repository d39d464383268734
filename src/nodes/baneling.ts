import { HatcheryError } from '../core/errors.js';
import type {
  CompileContext,
  CompiledNode,
  NodeBase,
  NodeKindImpl,
  NodeResult,
  RunContext,
} from '../engine/contracts.js';
import { Template } from '../engine/templates/templates.js';
import type { BanelingDef } from '../schema/baneling.js';
import { checkToolRef } from '../tools/compile.js';
import { callToolRef } from '../tools/invoke.js';

/** A JSON value with every string compiled to a template. */
type ArgTree = Template | number | boolean | null | ArgTree[] | { [k: string]: ArgTree };

function compileArgs(value: unknown, field: string, cc: CompileContext): ArgTree {
  if (typeof value === 'string') return cc.template(value, field) ?? null;
  if (Array.isArray(value)) return value.map((v, i) => compileArgs(v, `${field}/${i}`, cc));
  if (value && typeof value === 'object') {
    const obj: { [k: string]: ArgTree } = {};
    for (const [k, v] of Object.entries(value)) obj[k] = compileArgs(v, `${field}/${k}`, cc);
    return obj;
  }
  return value as number | boolean | null;
}

function renderArgs(tree: ArgTree, scope: RunContext): unknown {
  if (tree === null || typeof tree !== 'object') return tree;
  if (Array.isArray(tree)) return tree.map((t) => renderArgs(t, scope));
  if (tree instanceof Template) return scope.render(tree);
  const obj: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(tree as { [k: string]: ArgTree })) obj[k] = renderArgs(v, scope);
  return obj;
}

/** Baneling: one static tool call with templated arguments; its output is the tool's text. */
export const banelingImpl: NodeKindImpl<BanelingDef> = {
  compile(def: BanelingDef, base: NodeBase, cc: CompileContext): CompiledNode {
    const ref = checkToolRef(def.tool_name, 'tool_name', cc);
    const args = compileArgs(def.tool_args ?? {}, 'tool_args', cc);
    return {
      ...base,
      exec: async (scope: RunContext): Promise<NodeResult> => {
        if (!ref)
          throw new HatcheryError('UNKNOWN_TOOL', `unknown tool "${def.tool_name}"`, { field: 'tool_name' });
        const rendered = renderArgs(args, scope) as Record<string, unknown>;
        const res = await callToolRef(scope, base.name, ref, rendered, def.timeout_ms);
        if (res.isError) {
          throw new HatcheryError('TOOL', `tool "${def.tool_name}" failed: ${res.text}`, {
            field: 'tool_name',
            tool: def.tool_name,
          });
        }
        return { text: res.text };
      },
    };
  },
};
