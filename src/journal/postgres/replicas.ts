/**
 * The processes using a Postgres run store, and whether each is alive: every one keeps a row in
 * `replicas` with a heartbeat the database's clock stamps (no clock skew between machines). A run owned
 * by a replica whose heartbeat is older than the timeout has nobody running it.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import { HatcheryError } from '../../core/errors.js';
import { pidAlive, processOwner } from '../owner.js';
import { SCHEMA } from './schema.js';

/** Default time without a heartbeat after which a replica is dead, in ms. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 30_000;

/** The replica id of a process that was given none: the host's name for a server, host and pid otherwise. */
export function defaultReplicaId(server: boolean): string {
  return server ? hostname() : `${hostname()}:${process.pid}`;
}

/** SQL that is true for a row of `replicas` (aliased `p`) whose heartbeat is within `$N` ms. */
export const aliveSql = (param: number): string =>
  `p.heartbeat_at > now() - make_interval(secs => $${param}::double precision / 1000)`;

/** This process's row in `replicas`, beating every third of the timeout while it is started. */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private started: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    readonly id: string,
    readonly timeoutMs: number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Takes the replica's row (refused while another live process holds the id) and starts beating. */
  start(): Promise<void> {
    this.started ??= this.take().then(() => {
      this.timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.timeoutMs / 3)));
      this.timer.unref();
    });
    return this.started;
  }

  private async take(): Promise<void> {
    const me = processOwner;
    const res = await this.pool.query<{ host: string; pid: number; alive: boolean }>(
      `INSERT INTO ${SCHEMA}.replicas AS p (id, host, pid, since, heartbeat_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (id) DO UPDATE SET host = $2, pid = $3, since = $4, heartbeat_at = now()
       WHERE NOT (${aliveSql(5)}) OR (p.host = $2 AND p.pid = $3 AND p.since = $4)
       RETURNING p.id`,
      [this.id, me.host, me.pid, me.since, this.timeoutMs],
    );
    if (res.rowCount === 1) return;
    // Held by a live heartbeat: the same host's process may be gone (a restart before the timeout).
    const held = (
      await this.pool.query<{ host: string; pid: number }>(
        `SELECT host, pid FROM ${SCHEMA}.replicas WHERE id = $1`,
        [this.id],
      )
    ).rows[0];
    if (held && held.host === me.host && !pidAlive(held.pid)) {
      await this.pool.query(
        `UPDATE ${SCHEMA}.replicas SET pid = $2, since = $3, heartbeat_at = now() WHERE id = $1`,
        [this.id, me.pid, me.since],
      );
      return;
    }
    throw new HatcheryError(
      'USAGE',
      `replica id "${this.id}" is in use by process ${held?.pid ?? '?'} on ${held?.host ?? '?'}, whose heartbeat is fresh; give each replica its own --replica-id`,
    );
  }

  private async beat(): Promise<void> {
    const me = processOwner;
    try {
      const res = await this.pool.query(
        `UPDATE ${SCHEMA}.replicas SET heartbeat_at = now() WHERE id = $1 AND pid = $2 AND since = $3`,
        [this.id, me.pid, me.since],
      );
      if (res.rowCount === 0) {
        this.warn(
          `replica id "${this.id}" was taken by another process (this one was thought dead); its runs may be resumed elsewhere`,
        );
      }
    } catch (err) {
      this.warn(`heartbeat of replica "${this.id}" failed: ${(err as Error).message}`);
    }
  }

  /** Stops beating (the row stays: a restart with the same id takes it back). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Says this process stopped: its heartbeat reads as old at once, so the runs a stopping server left
   * running are claimed by the other replicas now, not a heartbeat timeout later.
   */
  async end(): Promise<void> {
    this.stop();
    const me = processOwner;
    await this.pool.query(
      `UPDATE ${SCHEMA}.replicas SET heartbeat_at = '-infinity' WHERE id = $1 AND pid = $2 AND since = $3`,
      [this.id, me.pid, me.since],
    );
  }
}
