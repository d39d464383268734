/**
 * The durable engine and the Postgres driver load only for a Postgres store: a run, a listing and a
 * server start with the state folder import neither (start-up and per-run cost stay as they were).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '../helpers.js';
import { testDatabase } from './database.js';

let url: string;
beforeAll(async () => {
  url = await testDatabase('lazy');
});

/** The modules `hatchery-mcp <args>` imported (the engine's and pg's among them or not). */
const loadedBy = (args: string[]) =>
  modulesLoadedBy(args, /\/node_modules\/(pg|@dbos-inc)\/|\/dist\/(runtime\/durable|journal\/postgres)\//);

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
