import type { Document, Node } from 'yaml';
import type { ValidationProblem } from '../core/errors.js';
import { hatcheryAliases } from '../schema/names.js';
import { NODE_KINDS } from '../schema/nodes.js';
import { tooDeepOffset, yamlLib } from './yaml.js';

/** Canonical key -> the other spellings a file may use for it (`usr_prompt` <- `user_message`...). */
const SPELLINGS: ReadonlyMap<string, string[]> = (() => {
  const m = new Map<string, string[]>();
  const tables = [hatcheryAliases, ...Object.values(NODE_KINDS).map((k) => k.aliases), { name: 'id' }];
  for (const t of tables)
    for (const [alias, canonical] of Object.entries(t))
      m.set(canonical, [...(m.get(canonical) ?? []), alias]);
  return m;
})();

/** The key of a map pair as text (`1` and `"1"` are the same key once loaded). */
function keyText(key: unknown): string | undefined {
  if (yamlLib().isScalar(key)) return String(key.value);
  return typeof key === 'string' ? key : undefined;
}

/** Follows an alias to its anchored node. */
function deref(node: unknown, doc: Document.Parsed): unknown {
  return yamlLib().isAlias(node) ? node.resolve(doc) : node;
}

/** The pair of `map` whose key is `key`, looking through `<<` merge keys as the loader does. */
function findPair(
  map: unknown,
  key: string,
  doc: Document.Parsed,
  depth = 0,
): { key: unknown; value: unknown } | undefined {
  if (!yamlLib().isMap(map) || depth > 8) return undefined;
  for (const p of map.items) if (keyText(p.key) === key) return p;
  // Compile problems name the canonical key; the file may spell it another way.
  for (const alias of SPELLINGS.get(key) ?? [])
    for (const p of map.items) if (keyText(p.key) === alias) return p;
  // A long key is cut to "first 40 characters…" in paths.
  if (key.endsWith('…')) {
    const head = key.slice(0, -1);
    for (const p of map.items) if (keyText(p.key)?.startsWith(head)) return p;
  }
  for (const p of map.items) {
    if (keyText(p.key) !== '<<') continue;
    const v = deref(p.value, doc);
    const sources = yamlLib().isSeq(v) ? v.items.map((i) => deref(i, doc)) : [v];
    for (const s of sources) {
      const found = findPair(s, key, doc, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** Offset of a JSON path in the source: the key of its last segment, or the deepest part that exists. */
function offsetOf(path: string, doc: Document.Parsed): number | undefined {
  let node: unknown = deref(doc.contents, doc);
  let at = (node as Node | null)?.range?.[0];
  if (path === '') return at;
  const segs = path.split('/');
  for (let i = 0; i < segs.length; i++) {
    if (yamlLib().isSeq(node)) {
      const item = node.items[Number(segs[i])];
      if (!/^\d+$/.test(segs[i]!) || item === undefined) return at;
      at = (item as Node).range?.[0] ?? at;
      node = deref(item, doc);
      continue;
    }
    // A key holding "/" was split with the path: try the longest run of segments that is a key.
    let pair: { key: unknown; value: unknown } | undefined;
    let j = segs.length;
    while (j > i && !pair) {
      pair = findPair(node, segs.slice(i, j).join('/'), doc);
      if (!pair) j--;
    }
    if (!pair) return at;
    i = j - 1;
    at = (pair.key as Node | null)?.range?.[0] ?? (pair.value as Node | null)?.range?.[0] ?? at;
    node = deref(pair.value, doc);
  }
  return at;
}

/**
 * Gives every problem that has none the 1-based line and column of its JSON path in `text` (JSON or
 * YAML: the YAML parser reads both). Parses the text once, and only when there are problems, so a
 * clean load costs nothing; a path that is not in the text (a missing key) points at its parent.
 */
export function locateProblems(text: string, problems: readonly ValidationProblem[]): void {
  const todo = problems.filter((p) => p.line === undefined);
  if (todo.length === 0) return;
  // The YAML parser recurses: a file nested too deeply (reported as such) gets no positions.
  if (tooDeepOffset(text) >= 0) return;
  // One parse and one line table for all the problems of the file.
  const yaml = yamlLib();
  const lines = new yaml.LineCounter();
  let doc: Document.Parsed;
  try {
    doc = yaml.parseDocument(text, { lineCounter: lines, logLevel: 'silent', uniqueKeys: false });
  } catch {
    return;
  }
  for (const p of todo) {
    const offset = offsetOf(p.path, doc);
    if (offset === undefined) continue;
    const { line, col } = lines.linePos(offset);
    p.line = line;
    p.column = col;
  }
}
