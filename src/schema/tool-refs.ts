/** Where the file format puts tool references: one walker for every check that reads them. */

/** A tool reference as written in a node, with its JSON path below the node. */
export interface ToolRefField {
  /** The reference as written: `read_file`, `node:X`, `hatch:f.json`, `mcp:s/t`, `js:m.mjs#f`. */
  readonly ref: string;
  /** Below the node: `tool_name`, `tools/0`, `spawn/templates/1/tools/2`. */
  readonly field: string;
}

/** The tool references of one node: a baneling's `tool_name`, a drone's `tools` and its spawn templates' `tools`. */
export function toolRefFields(kind: string, def: Readonly<Record<string, unknown>>): ToolRefField[] {
  const found: ToolRefField[] = [];
  const take = (ref: unknown, field: string) => {
    if (typeof ref === 'string') found.push({ ref, field });
  };
  if (kind === 'baneling') take(def.tool_name, 'tool_name');
  if (kind !== 'drone') return found;
  if (Array.isArray(def.tools))
    def.tools.forEach((r, i) => {
      take(r, `tools/${i}`);
    });
  const spawn = def.spawn as { templates?: { tools?: unknown }[] } | undefined;
  spawn?.templates?.forEach((t, j) => {
    if (Array.isArray(t.tools))
      t.tools.forEach((r, i) => {
        take(r, `spawn/templates/${j}/tools/${i}`);
      });
  });
  return found;
}
