import { HatcheryError } from '../core/errors.js';
import type { Hatchery, Tool } from '../engine/contracts.js';

function inputOf(args: Record<string, unknown>, tool: string): string {
  // `input_str` is the original Hatchery's argument name.
  const v = args.input ?? args.input_str;
  if (typeof v !== 'string') {
    throw new HatcheryError('TOOL', `invalid arguments for ${tool}: "input" must be a string`, { tool });
  }
  return v;
}

/** The input schema of a hatch: or node: tool: one string `input`, plus a sub-hatchery's declared inputs. */
function nestedSchema(input: string, inputs: Readonly<Record<string, string>> = {}): Record<string, unknown> {
  const properties: Record<string, unknown> = { input: { type: 'string', description: input } };
  for (const [k, prompt] of Object.entries(inputs)) properties[k] = { type: 'string', description: prompt };
  return { type: 'object', properties, required: ['input', ...Object.keys(inputs)] };
}

/** A hatchery as one tool: its name and desc, one string `input` (plus its declared inputs). */
export function hatchTool(ref: string, sub: Hatchery): Tool {
  return {
    name: sub.name,
    description: sub.desc,
    inputSchema: nestedSchema('Input of the workflow ({{ ctx.input }})', sub.inputs),
    ref,
    async call(args, tc) {
      const input = inputOf(args, sub.name);
      const vars: Record<string, string> = {};
      for (const k of Object.keys(sub.inputs)) {
        if (typeof args[k] === 'string') vars[k] = args[k] as string;
      }
      return { text: await tc.scope.shared.services.runHatchery(sub, tc, input, vars) };
    },
  };
}

/** A node of the calling hatchery as a tool, looked up only when called. */
export function nodeTool(ref: string, node: string): Tool {
  return {
    name: node,
    description: `Runs the "${node}" step of this workflow on the given input and returns its result.`,
    inputSchema: nestedSchema('Input for the step ({{ ctx.input }})'),
    ref,
    async call(args, tc) {
      const input = inputOf(args, node);
      if (!tc.scope.hatchery.nodes.has(node)) {
        const names = [...tc.scope.hatchery.nodes.keys()].join(', ');
        throw new HatcheryError(
          'UNKNOWN_TOOL',
          `node:${node}: this hatchery has no node "${node}" (nodes: ${names})`,
          {
            tool: ref,
          },
        );
      }
      return { text: await tc.scope.shared.services.runFromNode(tc, node, input) };
    },
  };
}
