/**
 * A run journal's text in the `chunks` table: each flush of JSON lines is one row, in order, so a run
 * reads back as the same text a file store would hold. One statement in flight per journal; the last
 * chunk and the run's final status are written in one transaction.
 */
import type pg from 'pg';
import type { JournalSink } from '../line-journal.js';
import type { RunMeta, RunStatus } from '../store.js';
import { inTransaction, SCHEMA } from './schema.js';

/** How a ChunkSink starts: the run's row to insert (a new run), and the next chunk number. */
export interface ChunkSinkStart {
  /** A new run: its row is inserted with the first chunk, owned by `owner`. */
  meta?: RunMeta;
  /** The replica that owns the run while it runs. */
  owner: string;
  /** The number of the first chunk written (the run's chunk count when reopened). */
  seq: number;
}

/**
 * The time between two chunks of a run, in ms. A node on the engine takes a few milliseconds (its step
 * is a Postgres transaction); a chunk per node doubled the database's work per node, so the records of
 * a tenth of a second go in one. A reader waiting for the run (a read, the end) writes at once.
 */
const CHUNK_SPACING_MS = 100;

/** Writes one run's journal text into Postgres (see the module comment). */
export class ChunkSink implements JournalSink {
  private pending = '';
  /** A write is in flight (or about to start). */
  private busy = false;
  private timer: NodeJS.Timeout | undefined;
  /** Someone waits for what was handed over, or the run ended: write without spacing. */
  private urgent = false;
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
    this.kick();
  }

  close(status: RunStatus): void {
    this.closing = status;
    this.urgent = true;
    this.kick();
  }

  idle(): Promise<void> {
    if (!this.busy && this.timer === undefined && this.pending === '' && !this.endDue())
      return Promise.resolve();
    this.urgent = true;
    this.kick();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private endDue(): boolean {
    return this.closing !== undefined && !this.closed;
  }

  /**
   * Starts the next write: at once (on a later microtask, so a close() right after a write goes in the
   * same transaction) for the run's first chunk and when someone waits, else after the spacing.
   */
  private kick(): void {
    if (this.busy) return;
    if (this.urgent || this.meta !== undefined) {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
      this.busy = true;
      queueMicrotask(() => this.next());
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.busy) return;
        this.busy = true;
        this.next();
      }, CHUNK_SPACING_MS);
    }
  }

  /** Writes what is pending (and the end, once closed), or tells the waiters that nothing is left. */
  private next(): void {
    const text = this.pending;
    const end = this.endDue() ? this.closing : undefined;
    if (text === '' && end === undefined) {
      this.busy = false;
      this.urgent = false;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
      return;
    }
    this.pending = '';
    if (end !== undefined) this.closed = true;
    const after = () => {
      this.busy = false;
      if (this.pending === '' && !this.endDue()) {
        this.busy = true;
        this.next();
      } else {
        this.kick();
      }
    };
    this.store(text, end).then(after, (err: unknown) => {
      this.failed(err);
      after();
    });
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
    await inTransaction(this.pool, async (client) => {
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
        // Its workflow ended: no execution of it will need the steps kept inside its steps.
        await client.query(`DELETE FROM ${SCHEMA}.step_memos WHERE run_id = $1`, [this.runId]);
      }
    });
  }
}
