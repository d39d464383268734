/**
 * The run store on PostgreSQL (`--store postgres://...`): the same RunStore as the state folder's, for
 * several processes, on one or many machines, sharing runs. A run is a row of `runs` and its journal
 * text the rows of `chunks` (see sink.ts); a run `running` whose replica stopped beating is nobody's.
 * Claims and cancels of runs nobody owns take the run's row lock, so of two replicas one does it.
 */
import pg from 'pg';
import { HatcheryError } from '../../core/errors.js';
import { secretValues } from '../../core/secrets.js';
import { parseJournal, storedRun } from '../fold.js';
import { Extra, LineJournal } from '../line-journal.js';
import { OpenJournals } from '../open-journals.js';
import { processOwner } from '../owner.js';
import { isRunId, runNotFound } from '../run-files.js';
import { runsCommandLine } from '../state-dir.js';
import {
  cancellable,
  type RunFilter,
  type RunJournal,
  type RunMeta,
  type RunStatus,
  type RunStore,
  type RunStoreOptions,
  type RunSummary,
  type StoredRun,
} from '../store.js';
import { CancelPoll } from './cancels.js';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, defaultReplicaId, Heartbeat } from './replicas.js';
import { type Asker, appendLocked, askerParams, cancelAsked, lockedRun, ownerAliveSql } from './rows.js';
import { migrate, SCHEMA } from './schema.js';
import { ChunkSink } from './sink.js';

const DAY_MS = 86_400_000;
/** Statuses of runs that are over: only these are pruned. */
const FINISHED: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];
/** A prune after a run ends at most this often. */
const PRUNE_INTERVAL_MS = 600_000;

/** How a PostgresRunStore keeps runs and knows its replicas. */
export interface PostgresRunStoreOptions extends RunStoreOptions {
  /** This process's replica id (default: the host's name for a server, host and pid otherwise). */
  replicaId?: string;
  /** True for `serve`: the default replica id is the host's. */
  server?: boolean;
  /** A replica whose heartbeat is older than this is dead and its runs are claimable, in ms (default 30 000). */
  heartbeatTimeoutMs?: number;
  /** A journal larger than this is not read (default 256 MiB). */
  maxRunBytes?: number;
  /** Where warnings go (a failed write or heartbeat); default stderr. */
  warn?: (message: string) => void;
}

/** The URL without its credentials, for messages. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return 'postgres://(unreadable URL)';
  }
}

/** Runs in a PostgreSQL database (see the module comment). Open one with PostgresRunStore.open. */
/** The final record of a run cancelled while nobody ran it. */
const CANCELLED = { type: 'run_end', status: 'cancelled', error: 'the run was cancelled', code: 'ABORTED' };

export class PostgresRunStore implements RunStore {
  readonly location: string;
  readonly retentionMs: number;
  readonly replicaId: string;
  private readonly heartbeat: Heartbeat;
  private secrets: string[];
  private readonly maxRuns: number;
  private readonly maxRunBytes: number;
  private readonly warn: (message: string) => void;
  /** Journals of running runs this process owns, and of runs that ended until they are written. */
  private readonly journals: OpenJournals;
  private readonly live: ReadonlyMap<string, LineJournal>;
  /** Cancels asked through other processes of the runs this one runs. */
  private readonly cancels: CancelPoll;
  private lastPrune = 0;
  private closed = false;

  private constructor(
    readonly pool: pg.Pool,
    /** The URL as given, credentials included: for the engine's own connections, never shown. */
    readonly connectionUrl: string,
    options: PostgresRunStoreOptions,
  ) {
    this.location = redactedUrl(connectionUrl);
    this.retentionMs = (options.maxAgeDays ?? 30) * DAY_MS;
    this.maxRuns = options.maxRuns ?? 1000;
    this.maxRunBytes = options.maxRunBytes ?? 256 * 1024 * 1024;
    this.secrets = secretValues(options.env ?? process.env, options.secrets ?? []);
    this.warn = options.warn ?? ((m) => process.stderr.write(`hatchery-mcp: ${m}\n`));
    this.replicaId = options.replicaId ?? defaultReplicaId(options.server === true);
    this.journals = new OpenJournals({
      opened: () => this.cancels.update(),
      ended: () => {
        this.cancels.update();
        if (Date.now() - this.lastPrune > PRUNE_INTERVAL_MS) this.pruneSoon();
      },
    });
    this.live = this.journals.live;
    this.cancels = new CancelPoll(pool, this.live, options.pollMs ?? 500);
    this.heartbeat = new Heartbeat(
      pool,
      this.replicaId,
      options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
      this.warn,
    );
  }

  /**
   * Connects to the database at `url`, creates or migrates the store's tables and starts this process's
   * heartbeat; a database that cannot be reached is a STORE error naming it.
   */
  static async open(url: string, options: PostgresRunStoreOptions = {}): Promise<PostgresRunStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: 10,
      connectionTimeoutMillis: 10_000,
    });
    // An idle client whose connection drops must not crash the process (pg emits 'error' on the pool).
    pool.on('error', () => {});
    const store = new PostgresRunStore(pool, url, options);
    try {
      await migrate(pool, store.location);
      await store.heartbeat.start();
    } catch (err) {
      await pool.end().catch(() => {});
      if (err instanceof HatcheryError) throw err;
      throw new HatcheryError(
        'STORE',
        `cannot use the run store at ${store.location}: ${(err as Error).message}; check the URL given with --store (or HATCHERY_STORE), that the server runs and that the user may create tables`,
        { state: store.location },
        { cause: err },
      );
    }
    store.pruneSoon();
    return store;
  }

  /** After this long without a heartbeat a replica is dead, in ms. */
  get heartbeatTimeoutMs(): number {
    return this.heartbeat.timeoutMs;
  }

  addSecrets(values: readonly string[]): void {
    this.secrets = [...new Set([...this.secrets, ...values])].sort((a, b) => b.length - a.length);
  }

  /** Opens the chunks of run `id` for its journal; a failed write is said once. */
  private sink(id: string, meta: RunMeta | undefined, seq: number) {
    return (failed: (err: unknown) => void) =>
      new ChunkSink(this.pool, id, { meta, owner: this.replicaId, seq }, (err) => {
        failed(err);
        this.warn(
          `writing the journal of run ${id} to ${this.location} failed (${(err as Error).message}); the run goes on, but its journal is incomplete`,
        );
      });
  }

  create(meta: RunMeta): RunJournal {
    if (!isRunId(meta.id)) {
      throw new HatcheryError(
        'USAGE',
        `run id "${meta.id}" is not a UUID; leave runId unset to get a fresh one`,
      );
    }
    if (this.closed) throw new HatcheryError('STORE', `the run store at ${this.location} is closed`);
    const j = new LineJournal(this.sink(meta.id, meta, 0), meta.id, {
      secrets: this.secrets,
      onEnd: this.journals.onEnd,
      first: new Extra('run_start', { ...meta, owner: { ...meta.owner, replica: this.replicaId } }),
    });
    this.journals.add(j);
    return j;
  }

  async reopen(id: string, fields: Record<string, unknown> = {}): Promise<RunJournal> {
    if (!isRunId(id)) throw runNotFound(id, this.location);
    if (this.live.has(id)) {
      throw new HatcheryError(
        'USAGE',
        `run ${id} is still running in this process; cancel it or wait for it to end`,
      );
    }
    await this.settle(id);
    const taken = await this.locked(id, async (client, text, alive) => {
      const stored = storedRun(text);
      if (stored?.summary.status === 'running' && alive) {
        throw new HatcheryError(
          'RESUME_REFUSED',
          `run ${id} is running again in another process (it was resumed meanwhile); wait for it, or cancel it with: ${runsCommandLine(['cancel', id], this.location)}`,
          { run: id },
        );
      }
      if (stored !== undefined && (await cancelAsked(client, id))) {
        // Asked while nobody ran it (its process died before it saw the flag): it ends so, not again.
        await appendLocked(client, id, stored, CANCELLED);
        return { cancelled: true as const };
      }
      await client.query(
        `UPDATE ${SCHEMA}.runs SET status = 'running', owner = $2, ended_at = NULL, cancel_requested = false WHERE id = $1`,
        [id, this.replicaId],
      );
      const next = await client.query<{ n: number }>(
        `SELECT COALESCE(max(seq) + 1, 0) AS n FROM ${SCHEMA}.chunks WHERE run_id = $1`,
        [id],
      );
      return { text, seq: next.rows[0]!.n };
    });
    if (!taken) throw runNotFound(id, this.location);
    if ('cancelled' in taken) {
      throw new HatcheryError('RESUME_REFUSED', `run ${id} was cancelled while no process ran it`, {
        run: id,
      });
    }
    const j = new LineJournal(this.sink(id, undefined, taken.seq), id, {
      secrets: this.secrets,
      onEnd: this.journals.onEnd,
      first: new Extra('resumed', { ...fields, owner: { ...processOwner, replica: this.replicaId } }),
      seen: parseJournal(taken.text).strings.keys(),
    });
    this.journals.add(j);
    await j.flush();
    return j;
  }

  async read(id: string): Promise<StoredRun | undefined> {
    if (!isRunId(id)) return undefined;
    await this.settle(id);
    const runs = await this.load([id]);
    return runs.get(id);
  }

  /**
   * Runs `ids` as stored, keyed by id (missing ones left out); a run `running` whose replica is dead
   * (and not this process's) reads as `interrupted`.
   */
  private async load(ids: readonly string[]): Promise<Map<string, StoredRun>> {
    const res = await this.pool.query<{ id: string; alive: boolean; bytes: string | null }>(
      `SELECT r.id, ${ownerAliveSql(2)} AS alive,
              (SELECT sum(length(c.text)) FROM ${SCHEMA}.chunks c WHERE c.run_id = r.id) AS bytes
       FROM ${SCHEMA}.runs r WHERE r.id = ANY($1::uuid[])`,
      [ids, ...askerParams(this.asker())],
    );
    const out = new Map<string, StoredRun>();
    const readable: string[] = [];
    for (const row of res.rows) {
      if (Number(row.bytes ?? 0) > this.maxRunBytes) {
        throw new HatcheryError(
          'FILE_IO',
          `run ${row.id} in ${this.location} is not read: its journal holds ${row.bytes} characters, more than the ${this.maxRunBytes} a journal may`,
          { run: row.id, state: this.location },
        );
      }
      readable.push(row.id);
    }
    if (readable.length === 0) return out;
    const texts = await this.pool.query<{ run_id: string; text: string }>(
      `SELECT run_id, string_agg(text, '' ORDER BY seq) AS text FROM ${SCHEMA}.chunks WHERE run_id = ANY($1::uuid[]) GROUP BY run_id`,
      [readable],
    );
    const alive = new Map(res.rows.map((r) => [r.id, r.alive]));
    for (const { run_id: id, text } of texts.rows) {
      const run = storedRun(text);
      if (!run) continue;
      if (run.summary.status === 'running' && !alive.get(id)) run.summary.status = 'interrupted';
      out.set(id, run);
    }
    return out;
  }

  async list(filter: RunFilter = {}): Promise<RunSummary[]> {
    await this.idle();
    const limit = filter.limit ?? 50;
    const prefix = filter.idPrefix;
    if (prefix !== undefined && !/^[0-9a-f-]*$/i.test(prefix)) return [];
    const runs: RunSummary[] = [];
    const page = 64;
    for (let offset = 0; runs.length < limit; offset += page) {
      const res = await this.pool.query<{ id: string }>(
        `SELECT id FROM ${SCHEMA}.runs
         WHERE ($1::text IS NULL OR hatchery = $1) AND ($2::text IS NULL OR id::text LIKE $2 || '%')
         ORDER BY started_at DESC, id LIMIT $3 OFFSET $4`,
        [filter.hatchery ?? null, prefix?.toLowerCase() ?? null, page, offset],
      );
      if (res.rows.length === 0) break;
      const ids = res.rows.map((r) => r.id);
      const stored = await this.load(ids);
      for (const id of ids) {
        const s = stored.get(id)?.summary;
        if (!s) continue;
        if (filter.status !== undefined && s.status !== filter.status) continue;
        runs.push(s);
        if (runs.length >= limit) break;
      }
      if (res.rows.length < page) break;
    }
    return runs;
  }

  async claimInterrupted(only?: (run: RunMeta) => boolean): Promise<RunSummary[]> {
    return this.claim(false, only);
  }

  /**
   * Claims the running runs of other replicas that died (see claimInterrupted) for the engine to run
   * again; the runs of this replica's own earlier process are the engine's own recovery's. The runs
   * the claim ended because a cancel was asked of them come too, `cancelled`.
   */
  claimOthers(): Promise<RunSummary[]> {
    return this.claim(true);
  }

  private async claim(othersOnly: boolean, only?: (run: RunMeta) => boolean): Promise<RunSummary[]> {
    const res = await this.pool.query<{ id: string }>(
      `SELECT r.id FROM ${SCHEMA}.runs r WHERE r.status = 'running' AND NOT ${ownerAliveSql(1)}
       AND ($4::boolean IS FALSE OR r.owner IS DISTINCT FROM $1)`,
      [...askerParams(this.asker()), othersOnly],
    );
    const claimed: RunSummary[] = [];
    for (const { id } of res.rows) {
      if (this.live.has(id)) continue;
      const summary = await this.locked(id, async (client, text, alive) => {
        const run = storedRun(text);
        if (!run || alive) return undefined;
        if (run.summary.status !== 'running') {
          // The records say it ended (the status update was lost): the row follows them.
          await client.query(`UPDATE ${SCHEMA}.runs SET status = $2, owner = NULL WHERE id = $1`, [
            id,
            run.summary.status,
          ]);
          return undefined;
        }
        if (only && !only(run.meta)) return undefined;
        // A cancel asked of its owner, which died before it saw it, ends the run now.
        if (await cancelAsked(client, id)) {
          const ended = await appendLocked(client, id, run, CANCELLED);
          return othersOnly ? ended : undefined;
        }
        return appendLocked(client, id, run, {
          type: 'interrupted',
          owner: run.meta.owner,
          by: { ...processOwner, replica: this.replicaId },
        });
      });
      if (summary) claimed.push(summary);
    }
    return claimed;
  }

  async cancel(id: string): Promise<RunSummary | undefined> {
    const run = await this.read(id);
    if (!run) return undefined;
    const s = run.summary;
    if (s.status === 'running' && this.live.has(id)) {
      this.cancels.fire(id);
      return s;
    }
    if (!cancellable(s.status)) return s;
    const ended = await this.locked(id, async (client, text, alive) => {
      const now = storedRun(text);
      if (!now) return undefined;
      const st = now.summary.status;
      if (st === 'running' && alive) {
        // Its owner sees the flag within its poll interval and stops the run.
        await client.query(`UPDATE ${SCHEMA}.runs SET cancel_requested = true WHERE id = $1`, [id]);
        return now.summary;
      }
      if (!cancellable(st)) return now.summary;
      // Nobody runs it (its owner died, or it stopped): it ends as cancelled now.
      return appendLocked(client, id, now, CANCELLED);
    });
    return ended ?? (await this.read(id))?.summary;
  }

  onCancel(listener: (id: string) => void): void {
    this.cancels.onCancel(listener);
  }

  async prune(): Promise<number> {
    this.lastPrune = Date.now();
    const res = await this.pool.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM ${SCHEMA}.runs WHERE id IN (
           SELECT id FROM (
             SELECT id, ended_at, row_number() OVER (ORDER BY started_at DESC, id) AS n
             FROM ${SCHEMA}.runs WHERE status = ANY($1::text[])
           ) f WHERE f.n > $2 OR f.ended_at < $3
         ) RETURNING id
       ), memos AS (DELETE FROM ${SCHEMA}.step_memos WHERE run_id IN (SELECT id FROM gone))
       SELECT count(*)::int AS n FROM gone`,
      [FINISHED, this.maxRuns, Date.now() - this.retentionMs],
    );
    return res.rows[0]?.n ?? 0;
  }

  /** A prune in the background (at open, and at most every ten minutes after a run ends). */
  private pruneSoon(): void {
    this.lastPrune = Date.now();
    this.prune().catch((err: unknown) =>
      this.warn(`pruning the runs in ${this.location} failed: ${(err as Error).message}`),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancels.stop();
    this.heartbeat.stop();
    await this.idle();
    await this.heartbeat.end().catch(() => {});
    await this.pool.end();
  }

  /** Resolves when everything appended so far is written (every journal of this store). */
  idle(): Promise<void> {
    return this.journals.idle();
  }

  private settle(id: string): Promise<void> {
    return this.journals.settle(id);
  }

  /** Runs `fn` under run `id`'s row lock (see lockedRun). */
  private locked<T>(
    id: string,
    fn: (client: pg.PoolClient, text: string, alive: boolean) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    return lockedRun(this.pool, id, this.asker(), fn);
  }

  /** This process as it asks whether a run's owner is alive (see ownerAliveSql). */
  private asker(): Asker {
    return { replicaId: this.replicaId, timeoutMs: this.heartbeat.timeoutMs, ownIds: [...this.live.keys()] };
  }
}
