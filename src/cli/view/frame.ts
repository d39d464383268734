/**
 * The live form of the view: the run tree drawn as one frame (a line per entry, indented), redrawn in
 * place. A frame never grows past the terminal: finished subtrees fold into their node first, then the
 * oldest finished lines give way to "... N more done". Every step is one pass over the tree, so a
 * redraw of a run with thousands of entries stays linear.
 */
import type { RunTree, TreeEntry } from '../../runtime/run-tree.js';
import { label, seconds, shortError, usageText } from './format.js';
import { retryText } from './lines.js';
import type { Paint } from './style.js';

/** The size of the terminal and the time to draw: what a frame depends on besides the tree. */
export interface FrameSize {
  columns: number;
  rows: number;
  /** Now, on the clock the tree's times were taken with. */
  now: number;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** One line to draw: an entry (at its depth), or a marker standing for `more` finished lines. */
interface Row {
  entry?: TreeEntry;
  depth: number;
  more?: number;
  /** Entries folded into this one (its finished subtree). */
  folded?: number;
}

/**
 * Model calls are drawn when there is something to say (a wait, a retry, a stand-in, a failure) or when
 * they are a spawned agent's (under its spawn call): a node's own calls are summed on its line.
 */
function shown(e: TreeEntry, parent: TreeEntry): boolean {
  if (e.kind !== 'model' || parent.kind === 'tool') return true;
  return e.status !== 'done' || e.retries !== undefined || e.standIn !== undefined;
}

/** Entries below `e` that would be drawn, counted (a folded node says how many it holds). */
function countShown(e: TreeEntry): number {
  let n = 0;
  for (const c of e.children) if (shown(c, e)) n += 1 + countShown(c);
  return n;
}

/** The rows of the tree, depth first; with `fold`, finished subtrees are one row each. */
function rowsOf(root: TreeEntry, fold: boolean): Row[] {
  const rows: Row[] = [];
  const visit = (e: TreeEntry): void => {
    for (const c of e.children) {
      if (!shown(c, e)) continue;
      if (fold && c.status === 'done' && c.children.length > 0) {
        rows.push({ entry: c, depth: c.depth, folded: countShown(c) });
        continue;
      }
      rows.push({ entry: c, depth: c.depth });
      visit(c);
    }
  };
  visit(root);
  return rows;
}

/** A finished row may give way to a "more done" marker; running, failed and waiting ones may not. */
const spare = (r: Row) => r.entry?.status === 'done';

/**
 * Drops the oldest `drop` spare rows, each run of dropped rows becoming one marker row at its place;
 * returns the rows left.
 */
function elide(rows: Row[], drop: number): Row[] {
  const out: Row[] = [];
  let dropped = 0;
  let marker: Row | undefined;
  for (const r of rows) {
    if (dropped < drop && spare(r)) {
      dropped++;
      if (!marker) {
        marker = { depth: r.depth, more: 0 };
        out.push(marker);
      }
      marker.more = (marker.more ?? 0) + 1 + (r.folded ?? 0);
      continue;
    }
    marker = undefined;
    out.push(r);
  }
  return out;
}

/** The rows that fit in `height` lines: the whole tree, else folded, else with the oldest done ones elided. */
export function fitRows(root: TreeEntry, height: number): Row[] {
  const full = rowsOf(root, false);
  if (full.length <= height) return full;
  const folded = rowsOf(root, true);
  if (folded.length <= height) return folded;
  const spares = folded.reduce((n, r) => n + (spare(r) ? 1 : 0), 0);
  let drop = folded.length - height;
  let rows = elide(folded, drop);
  // Markers take lines too: drop more until it fits (a few passes at most: each adds what is missing).
  for (let i = 0; i < 8 && rows.length > height && drop < spares; i++) {
    drop = Math.min(spares, drop + rows.length - height);
    rows = elide(folded, drop);
  }
  // Still too tall (too many running lines): the newest lines stay.
  return rows.length > height ? rows.slice(rows.length - height) : rows;
}

/** The glyph of an entry's status; running ones spin with the clock. */
function glyph(e: TreeEntry, now: number, p: Paint): string {
  switch (e.status) {
    case 'done':
      return e.replayed ? p.dim('↺') : p.green('✔');
    case 'failed':
      return p.red('✖');
    case 'waiting':
      return p.yellow('?');
    default:
      return p.cyan(SPINNER[Math.floor(now / 80) % SPINNER.length]!);
  }
}

/** The words after an entry's name: kind, time, usage, retries, stand-in, error. */
function facts(e: TreeEntry, now: number, p: Paint, folded: number): string {
  const parts: string[] = [];
  if (e.kind === 'node' && e.nodeKind) parts.push(p.dim(e.nodeKind));
  if (e.kind === 'run' && e.depth > 0) parts.push(p.dim('hatchery'));
  if (e.replayed) parts.push(p.dim('from the journal'));
  else parts.push(p.dim(seconds(e.ms ?? Math.max(0, now - e.start))));
  const usage = e.kind === 'tool' ? '' : usageText(e.usage);
  if (usage) parts.push(usage);
  if (e.standIn) parts.push(p.dim(`standing in for ${label(e.standIn)}`));
  if (e.kind === 'model' && e.status === 'running' && e.waitUntil !== undefined && e.retries) {
    const left = Math.max(0, e.waitUntil - now);
    const what =
      left > 0
        ? retryText(e.retries, left, e.rateLimited === true, e.retryReason ?? '')
        : `retry ${e.retries}`;
    parts.push(p.yellow(what));
  } else if (e.retries) parts.push(p.yellow(`${e.retries} retr${e.retries === 1 ? 'y' : 'ies'}`));
  if (folded > 0) parts.push(p.dim(`(${folded} inside)`));
  if (e.status === 'failed' && e.error) parts.push(p.red(shortError(e.error, 200)));
  if (e.status === 'waiting') parts.push(p.yellow('waits for an answer'));
  return parts.join('  ');
}

/** The name of an entry as drawn: nodes bare, tools and models named so, failures in red. */
function title(e: TreeEntry, p: Paint): string {
  const name = e.item === undefined ? label(e.label) : `${label(e.label)} #${e.item + 1}`;
  const text = e.kind === 'tool' ? `tool ${name}` : e.kind === 'model' ? `model ${name}` : name;
  return e.status === 'failed' ? p.red(text) : e.kind === 'node' || e.kind === 'run' ? p.bold(text) : text;
}

/** Cuts a styled line to `width` visible characters (escape codes do not count), closing the styles. */
export function fitWidth(line: string, width: number): string {
  let visible = 0;
  let i = 0;
  while (i < line.length) {
    if (line.charCodeAt(i) === 0x1b) {
      const end = line.indexOf('m', i);
      i = end < 0 ? line.length : end + 1;
      continue;
    }
    if (visible === width) return `${line.slice(0, i)}${line.includes('\x1b[') ? '\x1b[0m' : ''}`;
    visible++;
    i++;
  }
  return line;
}

/** The frame of `tree` for a terminal of `size`: a header line (the run), then its entries. */
export function renderFrame(tree: RunTree, size: FrameSize, p: Paint): string {
  const root = tree.root;
  const width = Math.max(20, size.columns - 1);
  // One line for the header, one kept free so the terminal never scrolls the frame's first line away.
  const height = Math.max(1, size.rows - 2);
  const steps = tree.stepCount;
  const head = [
    `${glyph(root, size.now, p)} ${title(root, p)}`,
    p.dim(`${steps} step${steps === 1 ? '' : 's'}`),
    p.dim(seconds(root.ms ?? Math.max(0, size.now - root.start))),
  ];
  const usage = usageText(tree.usage());
  if (usage) head.push(usage);
  const lines = [fitWidth(head.join('  '), width)];
  for (const r of fitRows(root, height)) {
    const indent = '  '.repeat(r.depth);
    if (r.entry === undefined) {
      lines.push(fitWidth(p.dim(`${indent}… ${r.more} more done`), width));
      continue;
    }
    const e = r.entry;
    lines.push(
      fitWidth(
        `${indent}${glyph(e, size.now, p)} ${title(e, p)}  ${facts(e, size.now, p, r.folded ?? 0)}`,
        width,
      ),
    );
  }
  return lines.join('\n');
}
