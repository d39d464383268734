/**
 * What a node kind declares about itself beside its schema: what the loader, the analysis, the
 * flowchart, resume and the MCP tool definition read from a definition without compiling it. It lives
 * with the schema because the first half of a load (listing a file as a tool) and the journal sit
 * below the node kinds' code; each kind's file (drone.ts, loop.ts, ...) fills it in.
 */
import type { z } from 'zod';

/** How a node runs a chain it names: as one of its parallel branches, once per map item, as a loop's body. */
export type ChildHow = 'branch' | 'map' | 'body';

/** A field of a node that names the first nodes of chains the node runs in a context of its own. */
export interface ChildField {
  /** The field: a node name (`body`, `node`) or a list of them (`branches`). */
  readonly field: string;
  readonly how: ChildHow;
}

/** What a node of a kind implies for the MCP tool of its file, beside its tool references. */
export interface KindHints {
  /** It reaches outside the machine (a model, a program). */
  readonly openWorld?: boolean;
  /** false: it may change things (a program, an MCP server); undefined: it says nothing. */
  readonly readOnly?: false;
}

/** Reports one tool reference of a node: the value, its path below the node, and whether every run calls it. */
export type TakeToolRef = (ref: unknown, field: string, always: boolean) => void;

type Def = Readonly<Record<string, unknown>>;

/** A node kind as every reader of a definition sees it. */
export interface NodeKindSpec<S extends z.ZodObject = z.ZodObject> {
  /** The accepted spellings of `type`. */
  readonly types: readonly string[];
  /** The zod schema, built on first use (a file of drones never builds the others). */
  readonly schema: S;
  /** Old spellings of fields, mapped to their names. */
  readonly aliases: Readonly<Record<string, string>>;
  /** Fields naming chains the node runs itself; a kind with any is a container. */
  readonly children: readonly ChildField[];
  /** True for a kind that holds other nodes: resume serves its leaves, never it whole. */
  readonly container: boolean;
  /**
   * True when a node of this kind is one checkpointed step on a durable engine (a script, a
   * baneling); false when its steps are inside it (a drone's model and tool calls, a container's nodes).
   */
  readonly wholeStep: boolean;
  /** True when its on_limit is taken at its own limit (a loop's last iteration), so it needs no max_visits. */
  readonly ownLimit: boolean;
  /** What a node of this kind implies for its file's MCP tool annotations. */
  hints(def: Def): KindHints;
  /** True when a node of this kind that starts a run reads the run's input without a template. */
  readsInput(def: Def): boolean;
  /** Reports the tool references the node names (a baneling's tool, a drone's tools). */
  toolRefs(def: Def, take: TakeToolRef): void;
}

/** What a kind's file declares; what it leaves out is empty, false or none. */
export type NodeKindDeclaration<S extends z.ZodObject> = Pick<NodeKindSpec<S>, 'types'> &
  Partial<
    Pick<NodeKindSpec<S>, 'aliases' | 'children' | 'ownLimit' | 'readsInput' | 'toolRefs' | 'wholeStep'>
  > & {
    schema: () => S;
    hints?: KindHints | ((def: Def) => KindHints);
  };

const NO_HINTS: KindHints = {};

/** A node kind from its file's declaration. */
export function nodeKind<S extends z.ZodObject>(d: NodeKindDeclaration<S>): NodeKindSpec<S> {
  const { hints = NO_HINTS } = d;
  const children = d.children ?? [];
  return {
    types: d.types,
    get schema(): S {
      return d.schema();
    },
    aliases: d.aliases ?? {},
    children,
    container: children.length > 0,
    wholeStep: d.wholeStep ?? children.length === 0,
    ownLimit: d.ownLimit ?? false,
    hints: typeof hints === 'function' ? hints : () => hints,
    readsInput: d.readsInput ?? (() => false),
    toolRefs: d.toolRefs ?? (() => {}),
  };
}

/** One chain a node names: the first node's name, how it runs, and the field path naming it. */
export interface ChildRef {
  readonly name: string;
  readonly how: ChildHow;
  readonly field: string;
}

/** The chains a node of `spec` names in `def`, in field order (names not checked against the file). */
export function childrenOf(spec: NodeKindSpec | undefined, def: Def): ChildRef[] {
  const out: ChildRef[] = [];
  for (const { field, how } of spec?.children ?? []) {
    const v = def[field];
    if (typeof v === 'string') out.push({ name: v, how, field });
    else if (Array.isArray(v))
      v.forEach((name, i) => {
        if (typeof name === 'string') out.push({ name, how, field: `${field}/${i}` });
      });
  }
  return out;
}
