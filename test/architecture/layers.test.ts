import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers.js';
import { importCycles, importGraph, importsOf, upwardImports } from './imports.js';

// The cheap form of per-folder DEPS lists: the layers of src/ depend one way only,
// core, schema <- providers <- engine <- journal <- tools <- nodes <- loader <- runtime <- mcp <- cli.
describe('source layering', () => {
  const graph = importGraph(path.join(REPO_ROOT, 'src'));

  it('has no import that goes up the layer list (type imports included)', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('lets node kinds and tools see runs only through engine/contracts.ts, never Scope or Runtime', () => {
    const concrete = ['engine/scope.ts', 'runtime/runtime.ts'];
    const offenders = [...graph]
      .filter(([from]) => /^(nodes|tools)\//.test(from))
      .flatMap(([from, targets]) =>
        targets.filter((t) => concrete.includes(t)).map((t) => `${from} -> ${t}`),
      );
    expect(offenders).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('sees every form of import, so a new upward one cannot slip through', () => {
    const text = [
      "import { a } from '../runtime/runtime.js';",
      "import type { B } from '../mcp/server.js';",
      "import type {\n  C,\n  D,\n} from '../cli/main.js';",
      "export { e } from './local.js';",
      "export type { F } from '../loader/load.js';",
      "const m = await import('../mcp/http.js');",
      "import '../nodes/index.js';",
      "import x from 'node:fs';",
    ].join('\n');
    expect(importsOf(text)).toEqual([
      '../runtime/runtime.js',
      '../mcp/server.js',
      '../cli/main.js',
      './local.js',
      '../loader/load.js',
      '../mcp/http.js',
      '../nodes/index.js',
    ]);
    const fake = new Map([
      ['tools/x.ts', ['runtime/runtime.ts', 'engine/contracts.ts']],
      ['engine/contracts.ts', ['index.ts']],
      ['core/a.ts', ['core/b.ts']],
      ['core/b.ts', ['core/a.ts']],
      ['journal/y.ts', ['runtime/conversations.ts', 'engine/contracts.ts']],
    ]);
    expect(upwardImports(fake)).toEqual([
      'tools/x.ts -> runtime/runtime.ts (tools may not import runtime)',
      'engine/contracts.ts -> index.ts (an entry point: import the module it re-exports)',
      'journal/y.ts -> runtime/conversations.ts (journal may not import runtime)',
    ]);
    expect(importCycles(fake)).toEqual([['core/a.ts', 'core/b.ts']]);
  });
});
