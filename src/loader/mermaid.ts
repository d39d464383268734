import type { Hatchery } from '../engine/contracts.js';
import { type ChildHow, childrenOf } from '../schema/kind.js';
import { END } from '../schema/names.js';
import { kindSpec } from '../schema/nodes.js';
import { toolRefFields } from '../schema/tool-refs.js';
import { parseToolRef } from '../tools/refs.js';

/**
 * The Mermaid shape of each node kind: `[open, close]` around the quoted label. Only shapes that both
 * Mermaid and beautiful-mermaid read with a quoted label (trapezoids are not among them).
 */
export const KIND_SHAPES: Readonly<Record<string, readonly [string, string]>> = {
  drone: ['(', ')'], // rounded box
  baneling: ['[[', ']]'], // subroutine (double-sided box)
  script: ['[', ']'], // plain box
  parallel: ['{{', '}}'], // hexagon
  map: ['[(', ')]'], // cylinder: a stack of items
  loop: ['{', '}'], // diamond
  ask: ['((', '))'], // circle: a person answers
};

/** The word under a node's name: what the file's `type` says (a baneling is written "tool"). */
const KIND_WORD: Readonly<Record<string, string>> = { baneling: 'tool' };

/** Id of the start marker and of END; node ids all start with `n_` or `x_`, so they never collide. */
const START_ID = 'hatchery_start';
const END_ID = 'hatchery_end';
/** Longest label text kept; the rest becomes "…" (a long `until:` template must not swamp the picture). */
const MAX_LABEL = 48;

/**
 * Label text safe inside `"..."` for Mermaid and beautiful-mermaid: characters that could end the
 * label, start an entity (`#quot;`), a markdown string (backtick) or HTML (`<b>`) are replaced by
 * look-alikes; line breaks and other control characters become spaces; long text is cut.
 */
export function mermaidLabel(text: string, max = MAX_LABEL): string {
  const safe = text
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/"/g, "'")
    .replace(/`/g, "'")
    .replace(/\[/g, '(')
    .replace(/\]/g, ')')
    .replace(/\|/g, '¦')
    .replace(/#/g, '♯')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...safe];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : safe;
}

/**
 * A node id made of letters, digits and `_` only, one-to-one with names (`end` cannot appear bare):
 * `n_<name>` for names of such characters; otherwise `x_` and the name with `_` doubled, `.` as
 * `_d` and `-` as `_h` (so `a.b`, `a-b` and `a_b` stay three nodes).
 */
export function mermaidId(name: string): string {
  if (/^[A-Za-z0-9_]+$/.test(name)) return `n_${name}`;
  return `x_${name.replace(/[^A-Za-z0-9]/g, (c) => (c === '_' ? '__' : c === '.' ? '_d' : c === '-' ? '_h' : `_u${c.codePointAt(0)}_`))}`;
}

type NodeDef = Record<string, unknown>;

/** The hatchery as a Mermaid flowchart (`flowchart TD`): kinds as shapes, routing on the edges. */
export function hatcheryToMermaid(h: Hatchery, options: { layout?: boolean } = {}): string {
  const nodeLines: string[] = [];
  const edgeLines: string[] = [];
  const files = new Map<string, string>();
  let usesEnd = false;
  const target = (name: string): string => {
    if (name !== END) return mermaidId(name);
    usesEnd = true;
    return END_ID;
  };
  // One edge per pair of nodes, its labels joined: two edges between the same nodes (a loop's
  // `until` and its `on_limit`) are drawn on top of each other, their labels overlapping.
  const edges = new Map<
    string,
    { from: string; to: string; labels: string[]; dotted: boolean; back: boolean }
  >();
  const edge = (from: string, to: string, label?: string, dotted = false, back = false): void => {
    const key = `${from}\n${to}`;
    const e = edges.get(key);
    if (e === undefined)
      edges.set(key, { from, to, labels: label === undefined ? [] : [label], dotted, back });
    else {
      if (label !== undefined && !e.labels.includes(label)) e.labels.push(label);
      e.dotted &&= dotted;
    }
  };

  const owners = chainOwners(h);
  for (const node of h.nodes.values()) {
    const def = (h.def.nodes[node.index] ?? {}) as NodeDef;
    const id = mermaidId(node.name);
    const owner = owners.get(node.name);
    const [open, close] = KIND_SHAPES[node.kind] ?? ['[', ']'];
    nodeLines.push(
      `  ${id}${open}"${mermaidLabel(node.name)}<br/>${KIND_WORD[node.kind] ?? mermaidLabel(node.kind)}"${close}`,
    );
    // Edges into the chains the node runs itself: loop body, parallel branches, map chain.
    for (const c of childrenOf(kindSpec(node.kind), def)) edge(id, target(c.name), CHILD_LABEL[c.how]);
    // The end of a loop body, branch or map chain hands back to the node that runs it, not to END.
    const ends = owner === undefined ? () => target(END) : () => mermaidId(owner);
    const to = (t: string) => (t === END ? ends() : target(t));
    // The `next` edges: one plain edge, or a list labelled by the word matched and "default" last.
    // A loop leaves through `next` when its condition holds (only a loop has `until`).
    const r = node.route;
    const loopLabel = typeof def.until === 'string' ? `until: ${def.until}` : undefined;
    const inChain = owner !== undefined;
    if (r.kind === 'end') edge(id, ends(), loopLabel ?? (inChain ? 'done' : undefined), inChain, inChain);
    else if (r.kind === 'one') edge(id, to(r.target), loopLabel);
    else {
      // Only a drone has `route`.
      const choose = def.route === 'choose';
      r.targets.forEach((t, i) => {
        const label = choose ? 'choose' : i === r.targets.length - 1 ? 'default' : t;
        edge(id, to(t), loopLabel && !choose ? `${loopLabel}: ${label}` : label);
      });
    }
    if (node.onLimit !== undefined) edge(id, target(node.onLimit), 'on_limit', true);
    // The node's own tool references (a spawned agent's are not drawn): into the graph or to another file.
    for (const { ref, field } of toolRefFields(node.kind, def)) {
      if (field.startsWith('spawn/')) continue;
      const parsed = parseToolRef(ref);
      if ('error' in parsed) continue;
      if (parsed.kind === 'node') edge(id, target(parsed.node), 'tool', true);
      else if (parsed.kind === 'hatch') {
        let fileId = files.get(parsed.path);
        if (!fileId) {
          fileId = `file_${files.size + 1}`;
          files.set(parsed.path, fileId);
        }
        edge(id, fileId, 'hatch', true);
      }
    }
  }

  for (const { from, to, labels, dotted, back } of edges.values()) {
    const label = labels.length === 0 ? '' : `|"${mermaidLabel(labels.join(' / '))}"|`;
    // For the built-in renderer (svg, ascii) a chain's way back to its owner is written from the
    // owner: it ranks nodes along edges, and the loop back put branches above the start node.
    if (back && options.layout) edgeLines.push(`  ${to} <-.-${label} ${from}`);
    else edgeLines.push(`  ${from} ${dotted ? '-.->' : '-->'}${label} ${to}`);
  }
  const lines = ['flowchart TD', `  ${START_ID}(["start"])`, ...nodeLines];
  for (const [file, fileId] of files) lines.push(`  ${fileId}>"${mermaidLabel(file)}"]`);
  if (usesEnd) lines.push(`  ${END_ID}((("END")))`);
  lines.push(`  ${START_ID} --> ${mermaidId(h.start)}`, ...edgeLines);
  return `${lines.join('\n')}\n`;
}

/** The label of an edge into a chain a node runs itself. */
const CHILD_LABEL: Readonly<Record<ChildHow, string>> = { body: 'body', branch: 'branch', map: 'each item' };

/**
 * For each node inside a loop body, parallel branch or map chain, the node that runs that chain
 * (the first one found when chains share nodes). Chains are followed along `next` and `on_limit`.
 */
function chainOwners(h: Hatchery): Map<string, string> {
  const owners = new Map<string, string>();
  for (const node of h.nodes.values()) {
    const def = (h.def.nodes[node.index] ?? {}) as NodeDef;
    const queue = childrenOf(kindSpec(node.kind), def).map((c) => c.name);
    while (queue.length > 0) {
      const name = queue.pop() as string;
      const n = h.nodes.get(name);
      if (!n || owners.has(name) || name === node.name) continue;
      owners.set(name, node.name);
      const r = n.route;
      if (r.kind === 'one') queue.push(r.target);
      if (r.kind === 'list') queue.push(...r.targets);
      if (n.onLimit !== undefined) queue.push(n.onLimit);
    }
  }
  return owners;
}

/**
 * The SVG without its web-font `@import`s: the studio page and a saved picture must work offline and
 * fetch nothing outside (the style falls back to the system's sans-serif font).
 */
export function withoutFontImports(svg: string): string {
  return svg.replace(/^[ \t]*@import url\([^)]*\);[ \t]*\r?\n/gm, '');
}
