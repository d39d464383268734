import { open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { HatcheryError } from '../core/errors.js';
import { processOwner } from './owner.js';
import { runsCommandLine } from './state-dir.js';

/** Run ids are UUIDs: nothing else (`../../etc/passwd`) ever becomes a file name. */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;
/** A claim lock older than this was left by a claimer that died; it is taken over. */
const STALE_LOCK_MS = 30_000;

/** True when `id` has the shape of a run id (a UUID). */
export function isRunId(id: unknown): id is string {
  return typeof id === 'string' && RUN_ID.test(id);
}

/** The ids of the run files in a state folder (none when it does not exist yet). */
export async function runIds(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const ids: string[] = [];
  for (const n of names) {
    const id = runIdOfFile(n);
    if (id !== undefined) ids.push(id);
  }
  return ids;
}

/** The run id of a run file's name (`<uuid>.jsonl`), or undefined for any other name. */
export function runIdOfFile(name: string): string | undefined {
  return RUN_FILE.exec(name)?.[1];
}

/**
 * Runs `fn` while holding the exclusive lock file `lock` (created with `wx`, so two processes never
 * both hold it); undefined when another process holds it (it is doing the same thing). A lock left
 * by a process that died is removed once stale, for a later attempt.
 */
export async function withLock<T>(lock: string, fn: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    await writeFile(lock, `${JSON.stringify(processOwner)}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    try {
      if (Date.now() - (await stat(lock)).mtimeMs > STALE_LOCK_MS) await rm(lock, { force: true });
    } catch {
      // Gone meanwhile: its holder finished.
    }
    return undefined;
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}

/** NOT_FOUND for a run id the store does not have, or that is no run id at all (shown cut short). */
export function runNotFound(id: string, location: string): HatcheryError {
  const shown = JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}...` : id);
  return new HatcheryError(
    'NOT_FOUND',
    isRunId(id)
      ? `no run ${id} in ${location}; ${runsCommandLine(['list'], location)} shows the runs kept there`
      : `${shown} is not a run id (run ids are UUIDs); ${runsCommandLine(['list'], location)} shows them`,
    { run: id },
  );
}

/**
 * The text of run `id`'s journal `file` (in the state folder `location`); undefined when there is none.
 * A file larger than `maxBytes` is not read: an error naming it.
 */
export async function readRunFile(
  file: string,
  id: string,
  location: string,
  maxBytes: number,
): Promise<string | undefined> {
  let size = 0;
  try {
    const fh = await open(file, 'r');
    try {
      // The size of the file opened, not of the path: a file swapped meanwhile is not read unchecked.
      size = (await fh.stat()).size;
      if (size <= maxBytes) return await fh.readFile('utf8');
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HatcheryError('FILE_IO', `cannot read run ${id} in ${location}: ${(err as Error).message}`);
  }
  throw new HatcheryError(
    'FILE_IO',
    `run ${id} in ${location} is not read: its journal file holds ${size} bytes, more than the ${maxBytes} a journal may; delete the file if it is not a run of yours`,
    { run: id, state: location },
  );
}
