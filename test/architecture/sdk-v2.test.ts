import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers.js';

// The v1 SDK (@modelcontextprotocol/sdk) speaks only the 2025 protocol and is a dev dependency now,
// kept for tests that play a 2025-era client or server: an install without dev dependencies has no
// copy of it, so a source file that imported it would fail at run time, not at build time.

/** Every package a source text imports: static, type-only, re-exports and dynamic import(). */
function packagesOf(text: string): string[] {
  const specs: string[] = [];
  const re =
    /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^.'"][^'"]*)['"]|import\(\s*['"]([^.'"][^'"]*)['"]\s*\)/g;
  for (const m of text.matchAll(re)) specs.push((m[1] ?? m[2])!);
  return specs;
}

const V1 = /^@modelcontextprotocol\/sdk(\/|$)/;

/** Files of src/ that import the v1 SDK, as `file -> specifier` lines. */
function v1Imports(srcDir: string): string[] {
  const files = (readdirSync(srcDir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'));
  return files.flatMap((rel) =>
    packagesOf(readFileSync(path.join(srcDir, rel), 'utf8'))
      .filter((spec) => V1.test(spec))
      .map((spec) => `${rel} -> ${spec}`),
  );
}

describe('the MCP SDK in src/', () => {
  it('imports only the v2 packages (@modelcontextprotocol/server, /client, /node), never the v1 SDK', () => {
    expect(v1Imports(path.join(REPO_ROOT, 'src'))).toEqual([]);
  });

  it('sees every form of import, so a v1 import cannot slip through', () => {
    const text = [
      "import { Client } from '@modelcontextprotocol/sdk/client/index.js';",
      "import type { A } from '@modelcontextprotocol/sdk/types.js';",
      "import type {\n  B,\n  C,\n} from '@modelcontextprotocol/sdk/server/mcp.js';",
      "export { d } from '@modelcontextprotocol/sdk';",
      "const m = await import('@modelcontextprotocol/sdk/inMemory.js');",
      "import { Server } from '@modelcontextprotocol/server';",
      "import x from './local.js';",
    ].join('\n');
    expect(packagesOf(text).filter((s) => V1.test(s))).toEqual([
      '@modelcontextprotocol/sdk/client/index.js',
      '@modelcontextprotocol/sdk/types.js',
      '@modelcontextprotocol/sdk/server/mcp.js',
      '@modelcontextprotocol/sdk',
      '@modelcontextprotocol/sdk/inMemory.js',
    ]);
  });
});
