/**
 * A run file's last record, read from the file's end without reading and folding the whole file:
 * most runs in a state folder ended long ago, and their last line says so. A server start (claiming
 * interrupted runs) and pruning check thousands of files this way.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** How much of a run file's end is read to find its last record (an ended run's last line is short). */
const TAIL_BYTES = 16 * 1024;
/** The records after which a run is not running, whatever came before (a resume appends after them). */
const FINAL_RECORDS: ReadonlySet<unknown> = new Set(['run_end', 'interrupted', 'cancelled']);

/**
 * The last record of a run file when its last line is whole and short; undefined when unsure (a cut
 * line, a long one, no file). Synchronous: four awaited calls per file cost more than the read itself,
 * and callers checking many files yield between batches.
 */
function lastRecord(file: string): { type?: unknown; status?: unknown } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const { size } = fstatSync(fd);
    const length = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    const text = buf.toString('utf8');
    if (!text.endsWith('\n')) return undefined;
    const start = text.lastIndexOf('\n', text.length - 2);
    if (start < 0 && length < size) return undefined;
    const rec = JSON.parse(text.slice(start + 1)) as { type?: unknown; status?: unknown } | null;
    return rec !== null && typeof rec === 'object' ? rec : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** True when the run file's last line is a whole record that ends the run; false when unsure. */
export function endedByLastLine(file: string): boolean {
  const rec = lastRecord(file);
  return rec !== undefined && FINAL_RECORDS.has(rec.type);
}

/**
 * True when the run file's last line shows a run that pruning may delete: ended, and not waiting for
 * an answer (a run_end with status input_required). False when unsure: the caller reads the whole run.
 */
export function finishedByLastLine(file: string): boolean {
  const rec = lastRecord(file);
  if (rec === undefined || !FINAL_RECORDS.has(rec.type)) return false;
  return rec.type !== 'run_end' || rec.status !== 'input_required';
}
