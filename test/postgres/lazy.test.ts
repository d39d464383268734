/**
 * The durable engine and the Postgres driver load only for a Postgres store: a run, a listing and a
 * server start with the state folder import neither (start-up and per-run cost stay as they were).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tempDir } from '../helpers.js';
import { testDatabase } from './database.js';

const REGISTER = path.join(REPO_ROOT, 'test', 'fixtures', 'loads', 'register.mjs');
let url: string;
beforeAll(async () => {
  url = await testDatabase('lazy');
});

/** The modules `hatchery-mcp <args>` imported (the engine's and pg's among them or not). */
async function loadedBy(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const log = path.join(tempDir('hatchery-loads-'), 'loads.txt');
  const r = await runCli(args, {
    env: { ...env, HATCHERY_TEST_LOADS: log, NODE_OPTIONS: `--import ${REGISTER}` },
  });
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => /\/node_modules\/(pg|@dbos-inc)\/|\/dist\/(runtime\/durable|journal\/postgres)\//.test(l));
}

describe('loading the engine', () => {
  it('imports neither DBOS, pg nor the Postgres store without --store', async () => {
    expect(await loadedBy(['run', 'hatchery/read-notes.json'])).toEqual([]);
    expect(await loadedBy(['runs', 'list'])).toEqual([]);
  });

  it('imports them with --store (so the check above sees them when they load)', async () => {
    const loaded = await loadedBy(['run', 'hatchery/read-notes.json', '--store', url]);
    expect(loaded.some((l) => l.includes('/node_modules/@dbos-inc/'))).toBe(true);
    expect(loaded.some((l) => l.includes('/node_modules/pg/'))).toBe(true);
  });
});
