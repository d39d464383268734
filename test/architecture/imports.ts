import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The layers of src/, lowest first: a file may import its own layer and the ones before it. */
export const LAYERS = [
  'core',
  'schema',
  'providers',
  'engine',
  'journal',
  'tools',
  'nodes',
  'loader',
  'runtime',
  'mcp',
  'studio',
  'cli',
] as const;

/** Files that only re-export (the public API, the test fakes): they may import any layer, nothing imports them. */
export const ENTRY_POINTS = new Set(['index.ts', 'testing.ts', 'cli.ts']);

/** The layer of a path relative to src/ (its first folder), or undefined for an entry point. */
export function layerOf(rel: string): string | undefined {
  if (ENTRY_POINTS.has(rel)) return undefined;
  const top = rel.split('/')[0]!;
  if (!(LAYERS as readonly string[]).includes(top))
    throw new Error(`${rel} is in no layer: put it in one of ${LAYERS.join(', ')}`);
  return top;
}

/** Every relative import of a source text: static, type-only, re-exports and dynamic import(). */
export function importsOf(text: string): string[] {
  const specs: string[] = [];
  const re =
    /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(re)) specs.push((m[1] ?? m[2])!);
  return specs;
}

/** The import graph of a source tree: file (relative, '/'-separated) to the files it imports. */
export function importGraph(srcDir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = (readdirSync(srcDir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'));
  for (const rel of files) {
    const text = readFileSync(path.join(srcDir, rel), 'utf8');
    graph.set(
      rel,
      importsOf(text).map((spec) => path.posix.join(path.posix.dirname(rel), spec).replace(/\.js$/, '.ts')),
    );
  }
  return graph;
}

/** Imports that go up the layer list or into an entry point, as `from -> to (layer -> layer)` lines. */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(from);
    for (const to of targets) {
      const b = layerOf(to);
      if (b === undefined) bad.push(`${from} -> ${to} (an entry point: import the module it re-exports)`);
      else if (a !== undefined && LAYERS.indexOf(b as never) > LAYERS.indexOf(a as never))
        bad.push(`${from} -> ${to} (${a} may not import ${b})`);
    }
  }
  return bad;
}

/** Every import cycle (strongly connected component of more than one file, or a file importing itself). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative enough for a source tree of a few hundred files.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}
