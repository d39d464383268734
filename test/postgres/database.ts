/**
 * A database of its own for a test file, on the test run's PostgreSQL server (test/postgres-setup.ts).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** Creates a fresh, empty database and returns its URL (postgresql://.../<name>). */
export async function testDatabase(prefix = 'test'): Promise<string> {
  const server = inject('postgresUrl');
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return `${server}/${name}`;
}

/** The rows of one statement run on the database at `url`, on a connection of its own. */
export async function queryRows<R extends Record<string, unknown>>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
