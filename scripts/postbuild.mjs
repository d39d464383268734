// Makes the CLI executable, writes the editor JSON Schema generated from the zod schemas, copies the
// studio page's static files (tsc copies no assets), and stamps dist/ so the tests' global setup can
// tell a current build from a stale one.
import { chmodSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';

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
