// Bundles the CLI, makes it executable, writes the editor JSON Schema generated from the zod schemas,
// copies the studio page's static files (tsc copies no assets), and stamps dist/ so the tests' global
// setup can tell a current build from a stale one.
import { chmodSync, cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

// dist/cli.js, the bin, is one bundle of src/ (dependencies stay imports), with a chunk per lazy
// import under dist/chunks/: Node loads each ES module with its own resolve, read and compile, and
// the ~80 small modules a server loads before its first tools/list cost more of its cold start than
// their code (bench/cold-start.ts). tsc's tree beside it stays the library (index.js, testing.js).
const root = new URL('..', import.meta.url).pathname;
rmSync(new URL('../dist/chunks/', import.meta.url), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'src/cli.ts' },
  tsconfig: 'tsconfig.build.json',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  packages: 'external',
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: true,
  logLevel: 'warning',
});
chmodSync(new URL('../dist/cli.js', import.meta.url), 0o755);
const { hatcheryJsonSchema } = await import('../dist/schema/json-schema.js');
mkdirSync(new URL('../schema/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../schema/hatchery.schema.json', import.meta.url),
  `${JSON.stringify(hatcheryJsonSchema(), null, 2)}\n`,
);
cpSync(
  new URL('../src/studio/assets/', import.meta.url),
  new URL('../dist/studio/assets/', import.meta.url),
  {
    recursive: true,
  },
);
writeFileSync(new URL('../dist/.built', import.meta.url), `${new Date().toISOString()}\n`);
