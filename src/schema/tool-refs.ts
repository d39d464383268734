/** Where the file format puts tool references: one walker for every check that reads them. */
import { kindSpec } from './nodes.js';

/** A tool reference as written in a node, with its JSON path below the node. */
export interface ToolRefField {
  /** The reference as written: `read_file`, `node:X`, `hatch:f.json`, `mcp:s/t`, `js:m.mjs#f`. */
  readonly ref: string;
  /** Below the node: `tool_name`, `tools/0`, `spawn/templates/1/tools/2`. */
  readonly field: string;
  /** True when every run of the node calls it (a baneling's tool); a model may call a drone's or not. */
  readonly always: boolean;
}

/** The tool references of one node, as its kind declares them (a baneling's `tool_name`, a drone's `tools`...). */
export function toolRefFields(kind: string, def: Readonly<Record<string, unknown>>): ToolRefField[] {
  const found: ToolRefField[] = [];
  kindSpec(kind)?.toolRefs(def, (ref, field, always) => {
    if (typeof ref === 'string') found.push({ ref, field, always });
  });
  return found;
}
