import { readFile } from 'node:fs/promises';
import { HatcheryError } from '../../core/errors.js';
import type { RecordedCall } from '../../journal/replay.js';

/** The version of the cassette format this code reads and writes (the first line of every cassette). */
export const CASSETTE_VERSION = 1;

/** The first line of a cassette. */
export interface CassetteHeader {
  format: 'hatchery-cassette';
  version: number;
  created: string;
}

/** One recorded call of a cassette: the journal's recorded-call shape, so a run's journal replays as one. */
export type CassetteEntry = RecordedCall;

/** The header line of a new cassette. */
export function headerLine(): string {
  const header: CassetteHeader = {
    format: 'hatchery-cassette',
    version: CASSETTE_VERSION,
    created: new Date().toISOString(),
  };
  return `${JSON.stringify(header)}\n`;
}

/** Reads a cassette's entries; a missing file, a foreign header or a broken line is an error naming the line. */
export async function readCassette(file: string): Promise<CassetteEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new HatcheryError(
      'FILE_IO',
      `cannot read cassette ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; record one with run --record ${file}`,
      { cassette: file },
    );
  }
  const lines = text.split('\n');
  const bad = (line: number, why: string) =>
    new HatcheryError('INVALID_FILE', `${file}:${line}: ${why}`, { cassette: file });
  const header = parseLine(lines[0] ?? '') as Partial<CassetteHeader> | undefined;
  if (header?.format !== 'hatchery-cassette') {
    throw bad(1, 'not a hatchery cassette (the first line must be {"format":"hatchery-cassette",...})');
  }
  if (header.version !== CASSETTE_VERSION) {
    throw bad(
      1,
      `cassette version ${header.version}, but this hatchery-mcp reads version ${CASSETTE_VERSION}; record it again`,
    );
  }
  const entries: CassetteEntry[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const e = parseLine(line) as CassetteEntry | undefined;
    if (
      !e ||
      (e.type !== 'model' && e.type !== 'tool') ||
      typeof e.key !== 'string' ||
      typeof e.request !== 'object' ||
      typeof e.response !== 'object'
    ) {
      throw bad(i + 1, 'not a cassette entry ({"type":"model"|"tool","key","request","response"})');
    }
    entries.push(e);
  }
  return entries;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
