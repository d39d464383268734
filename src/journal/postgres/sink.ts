/**
 * A run journal's text in the `chunks` table: each flush of JSON lines is one row, in order, so a run
 * reads back as the same text a file store would hold. One statement in flight per journal; the last
 * chunk and the run's final status are written in one transaction.
 */
import type pg from 'pg';
import type { JournalSink } from '../line-journal.js';
import type { RunMeta, RunStatus } from '../store.js';
import { SCHEMA } from './schema.js';

/** How a ChunkSink starts: the run's row to insert (a new run), and the next chunk number. */
export interface ChunkSinkStart {
  /** A new run: its row is inserted with the first chunk, owned by `owner`. */
  meta?: RunMeta;
  /** The replica that owns the run while it runs. */
  owner: string;
  /** The number of the first chunk written (the run's chunk count when reopened). */
  seq: number;
}

/** Writes one run's journal text into Postgres (see the module comment). */
export class ChunkSink implements JournalSink {
  private pending = '';
  private busy = false;
  private closing: RunStatus | undefined;
  private closed = false;
  private waiters: (() => void)[] = [];
  private seq: number;
  private meta: RunMeta | undefined;
  private readonly owner: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly runId: string,
    start: ChunkSinkStart,
    private readonly failed: (err: unknown) => void,
  ) {
    this.seq = start.seq;
    this.meta = start.meta;
    this.owner = start.owner;
  }

  write(text: string): void {
    this.pending += text;
    // On a later microtask: a close() right after this write goes in the same transaction.
    if (!this.busy) {
      this.busy = true;
      queueMicrotask(() => this.next());
    }
  }

  close(status: RunStatus): void {
    this.closing = status;
    if (!this.busy) {
      this.busy = true;
      queueMicrotask(() => this.next());
    }
  }

  idle(): Promise<void> {
    if (!this.busy && this.pending === '') return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes what is pending (and the end, once closed), or tells the waiters that nothing is left. */
  private next(): void {
    const text = this.pending;
    const end = this.closing !== undefined && !this.closed ? this.closing : undefined;
    if (text === '' && end === undefined) {
      this.busy = false;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
      return;
    }
    this.pending = '';
    if (end !== undefined) this.closed = true;
    this.busy = true;
    this.store(text, end).then(
      () => this.next(),
      (err: unknown) => {
        this.failed(err);
        this.next();
      },
    );
  }

  private async store(text: string, end: RunStatus | undefined): Promise<void> {
    const meta = this.meta;
    const single = meta === undefined && end === undefined;
    if (single) {
      await this.pool.query(`INSERT INTO ${SCHEMA}.chunks (run_id, seq, text) VALUES ($1, $2, $3)`, [
        this.runId,
        this.seq++,
        text,
      ]);
      return;
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (meta !== undefined) {
        this.meta = undefined;
        await client.query(
          `INSERT INTO ${SCHEMA}.runs (id, hatchery, file, status, source, started_at, owner)
           VALUES ($1, $2, $3, 'running', $4, $5, $6)`,
          [this.runId, meta.hatchery, meta.file, meta.source, meta.startedAt, this.owner],
        );
      }
      if (text !== '') {
        await client.query(`INSERT INTO ${SCHEMA}.chunks (run_id, seq, text) VALUES ($1, $2, $3)`, [
          this.runId,
          this.seq++,
          text,
        ]);
      }
      if (end !== undefined) {
        await client.query(
          `UPDATE ${SCHEMA}.runs SET status = $2, ended_at = $3, owner = NULL, cancel_requested = false WHERE id = $1`,
          [this.runId, end, Date.now()],
        );
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }
}
