import type { Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import { HatcheryError } from '../core/errors.js';
import type { Hatchery } from '../engine/contracts.js';
import { likelyInputRequired } from '../loader/input-guess.js';
import type { PreparedLoad } from '../loader/prepare.js';
import type { HatcheryDef } from '../schema/hatchery.js';
import { kindSpec } from '../schema/nodes.js';
import { actualOf, didYouMean, listNames, nearest, promptLabel, quote } from '../schema/suggest.js';
import { toolRefFields } from '../schema/tool-refs.js';

/**
 * The answer to a call naming a tool or hatchery that is not served: the nearest served name, or a
 * few of them when nothing is near (`hint` is appended when the list is cut).
 */
export function unknownName(
  kind: 'tool' | 'hatchery',
  name: string,
  names: readonly string[],
  hint = '',
): string {
  const near = nearest(name, names);
  if (near) return `unknown ${kind} ${quote(name)}; did you mean ${quote(near)}?`;
  if (names.length === 0) return `unknown ${kind} ${quote(name)}; no hatcheries are loaded now`;
  return `unknown ${kind} ${quote(name)}; available: ${listNames(names, 10)}${names.length > 10 ? hint : ''}`;
}

/** Description of the free-text `input` argument every hatchery tool takes. */
export const INPUT_DESCRIPTION = 'Input of the workflow: the text it works on ({{ ctx.input }})';

/** Built-in tools that only read local files or echo text. */
const LOCAL_READ_TOOLS: ReadonlySet<string> = new Set(['read_file', 'list_dir', 'echo']);

/**
 * What can be said about a hatchery without running it: whether it reaches outside the machine
 * (models, HTTP, MCP servers, programs) and whether it only reads. Unknowns (hatch:, js:, mcp:
 * tools) count as neither read-only nor closed-world.
 */
export function annotationsFor(h: Hatchery): ToolAnnotations {
  return annotationsOf(h.name, h.def.nodes as Record<string, unknown>[], h.nodes.values());
}

/** annotationsFor from a file's node definitions and its nodes' kinds (compiled or only validated). */
function annotationsOf(
  name: string,
  defs: readonly Record<string, unknown>[],
  nodes: Iterable<{ readonly index: number; readonly kind: string }>,
): ToolAnnotations {
  let openWorld = false;
  let readOnly = true;
  // Node kinds by their index in the file, read once: a lookup per node would be quadratic.
  const kinds: (string | undefined)[] = [];
  for (const n of nodes) kinds[n.index] = n.kind;
  for (const [i, node] of defs.entries()) {
    const kind = kinds[i] ?? '';
    // What the kind implies (a model or a program is open world; a program, an MCP server may write).
    const hints = kindSpec(kind)?.hints(node);
    if (hints?.openWorld) openWorld = true;
    if (hints?.readOnly === false) readOnly = false;
    if (node.write_output !== undefined) readOnly = false;
    for (const { ref } of toolRefFields(kind, node)) {
      if (ref.startsWith('node:')) continue;
      if (LOCAL_READ_TOOLS.has(ref)) continue;
      if (ref === 'write_file') {
        readOnly = false;
        continue;
      }
      openWorld = true;
      readOnly = false;
    }
  }
  const a: ToolAnnotations = { title: name, readOnlyHint: readOnly, openWorldHint: openWorld };
  if (readOnly) a.destructiveHint = false;
  return a;
}

/** The MCP tool of a hatchery: `input` plus one string per declared input, described by its prompt. */
export function hatcheryTool(h: Hatchery): Tool {
  return toolOf(h.def, h.inputRequired, annotationsFor(h), h.outputSchema);
}

/**
 * The MCP tool of a file validated and not compiled yet (a deferred start): the same tool as
 * hatcheryTool gives once it is, but for `required: ['input']`, which is likelyInputRequired's guess
 * until the analysis has run (the registry sends the tool again when the guess was wrong).
 */
export function preparedTool(p: PreparedLoad): Tool {
  const { def, nodes, graph } = p;
  return toolOf(
    def,
    likelyInputRequired(def, nodes, graph.start),
    annotationsOf(def.name, def.nodes as Record<string, unknown>[], nodes),
    // A top-level output template makes the result its text, whatever the last node's schema.
    def.output === undefined ? graph.finalOutputSchema : undefined,
  );
}

/**
 * A hatchery's tool from its definition (name, description, input_prompt, inputs), whether a run
 * reads `input` (`inputRequired`), its annotations and the output schema of its result.
 */
function toolOf(
  def: HatcheryDef,
  inputRequired: boolean,
  annotations: ToolAnnotations,
  outputSchema: Record<string, unknown> | undefined,
): Tool {
  const properties: Record<string, object> = {
    input: {
      type: 'string',
      description: def.input_prompt
        ? `${promptLabel(def.input_prompt)} ({{ ctx.input }})`
        : INPUT_DESCRIPTION,
    },
  };
  for (const [name, prompt] of Object.entries(def.inputs ?? {})) {
    properties[name] = { type: 'string', description: prompt || name };
  }
  const tool: Tool = {
    name: def.name,
    description: def.desc,
    // Declared inputs are not `required`: a missing one is asked of the user (elicitation) instead.
    // `input` is, exactly when a run from the start reads ctx.input without a default.
    inputSchema: {
      type: 'object',
      properties,
      ...(inputRequired ? { required: ['input'] } : {}),
      additionalProperties: false,
    } as Tool['inputSchema'],
    annotations,
  };
  if (outputSchema && outputSchema.type === 'object')
    tool.outputSchema = outputSchema as Tool['outputSchema'];
  return tool;
}

/** Tool arguments again from a call's declared inputs (completed) and its `input`, for a run to take. */
export function withInputs(vars: Record<string, string>, input: string | undefined): Record<string, unknown> {
  return input === undefined ? { ...vars } : { ...vars, input };
}

/**
 * The call's `input` and declared inputs, checked against the hatchery (strings only, no unknown names).
 * `vars` has no prototype, so a declared name is never confused with an inherited one ("toString").
 */
export function hatcheryArgs(
  h: Hatchery,
  args: Record<string, unknown> | undefined,
): { input?: string; vars: Record<string, string> } {
  const vars: Record<string, string> = Object.create(null);
  let input: string | undefined;
  const unknown: string[] = [];
  // The SDK's argument parsing turns a "__proto__" argument whose value is an object into the
  // arguments' prototype: refuse it rather than let it vanish.
  const proto = args ? Object.getPrototypeOf(args) : null;
  if (proto !== null && proto !== Object.prototype) unknown.push('__proto__');
  for (const [k, v] of Object.entries(args ?? {})) {
    if (v === undefined || v === null) continue;
    if (k !== 'input' && !Object.hasOwn(h.inputs, k)) {
      unknown.push(k);
      continue;
    }
    if (typeof v !== 'string') {
      throw new HatcheryError(
        'USAGE',
        `argument "${k}" of ${h.name} must be a string (text), not ${actualOf(v)}`,
        { file: h.file },
      );
    }
    if (k === 'input') input = v;
    // A declared input may itself be called "input"; it is then both ctx.input and the declared value.
    if (k !== 'input' || Object.hasOwn(h.inputs, k)) vars[k] = v;
  }
  if (unknown.length > 0) {
    const valid = ['input', ...Object.keys(h.inputs)];
    const accepted = listNames(valid);
    const shown = unknown.slice(0, 10).map((u) => `${quote(u)}${didYouMean(u, valid)}`);
    if (unknown.length > shown.length) shown.push(`and ${unknown.length - shown.length} more`);
    throw new HatcheryError(
      'USAGE',
      `${h.name} has no argument${unknown.length > 1 ? 's' : ''} ${shown.join(', ')}; it accepts: ${accepted}`,
      { file: h.file },
    );
  }
  return input === undefined ? { vars } : { input, vars };
}
