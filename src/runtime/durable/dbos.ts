/**
 * The durable engine on DBOS Transact (`--store postgres://...`): each run is a DBOS workflow whose id
 * is the run id, its model calls, tool calls and leaf nodes checkpointed steps (steps.ts). A replica
 * that restarts with the same id recovers its own workflows (DBOS does that at launch); the running
 * runs of replicas whose heartbeat stopped are claimed once, under their row lock, and resumed through
 * DBOS's public API, by whichever live replica DBOS gives them to. Loaded only for a Postgres store.
 */
import pg from 'pg';
import { isShutdown } from '../../core/errors.js';
import { redactText } from '../../core/secrets.js';
import type { DurableSteps } from '../../engine/contracts.js';
import { keepStep, keptSteps } from '../../journal/postgres/memos.js';
import type { PostgresRunStore } from '../../journal/postgres/store.js';
import type { DurableEngine, RunResult, SlotLimit } from '../options.js';
import { holdSlot, RUN_WORKFLOW, SLOT_WORKFLOW, SlotQueues } from './slots.js';
import { DbosSteps, type StepMemos, type StepsOptions } from './steps.js';

/**
 * The DBOS application version of runs: one per major version of the run format. DBOS recovers only
 * workflows of its own version, and its default (a hash of the code) would strand the runs in flight
 * at every upgrade; a run whose hatchery file changed is refused by the definition hash instead.
 */
export const RUN_FORMAT_VERSION = 'hatchery-run-1';
/** The DBOS application name of hatchery-mcp's workflows. */
const APP_NAME = 'hatchery-mcp';
/**
 * The queue runs go back to when run again after their process died: polled by servers only, so a
 * `run` command sharing the store (it runs only its own) never takes one.
 */
const RECOVERED_QUEUE = 'hatchery-recovered';
/** Advisory lock key around DBOS's migrations, which take none ("hdbo"). */
const MIGRATION_LOCK = 0x6864626f;

type Dbos = typeof import('@dbos-inc/dbos-sdk').DBOS;

/** How the engine starts. */
export interface DbosEngineOptions {
  /** The store whose database DBOS shares (its own tables go in schema `dbos`). */
  store: PostgresRunStore;
  /** The database URL (with credentials), as given to --store. */
  url: string;
  /** Secret values never written by DBOS's log lines. */
  secrets: readonly string[];
  /** Where warnings go (default stderr). */
  warn?: (message: string) => void;
  /** Claim the runs of dead replicas (servers do; a `run` command runs only its own). */
  claims?: boolean;
}

/** The engine of this process: DBOS is one per process. */
let current: DbosEngine | undefined;

/** The workflow of every run (see the module comment). */
async function runWorkflow(): Promise<string> {
  const engine = current;
  if (engine === undefined) throw new Error('hatchery-mcp: a run workflow started with no engine');
  return engine.execute();
}

/** The workflow of a run slot (slots.ts); its arguments say whose it is, for the sweep. */
async function slotWorkflow(_runId: string, _holder: string): Promise<string> {
  const engine = current;
  if (engine === undefined) throw new Error('hatchery-mcp: a slot workflow started with no engine');
  return holdSlot(engine.dbos);
}

/**
 * DBOS's routine notices: queue polls meeting another replica's, and workflows a stopping process
 * leaves to the replica that takes them over. Not worth a line.
 */
const ROUTINE =
  /^(Contention detected in queue|Increasing polling interval for queue|Shutting down while \d+ workflows)/;

/** Runs as DBOS workflows (see the module comment). Start one with DbosEngine.launch. */
export class DbosEngine implements DurableEngine {
  /** Runs started in this process, by id, until their workflow runs them. */
  private readonly local = new Map<
    string,
    { body: (steps: DurableSteps) => Promise<string>; signal: AbortSignal | undefined }
  >();
  private recoverRun: ((runId: string, steps: DurableSteps) => Promise<unknown>) | undefined;
  private attached!: () => void;
  /** Settles once a runtime tells the engine how to run a recovered run. */
  private readonly ready = new Promise<void>((resolve) => {
    this.attached = resolve;
  });
  private claims: NodeJS.Timeout | undefined;
  private closed = false;
  /** True in a server: it runs again the runs of dead replicas (of the files it serves). */
  private serves = false;

  readonly dbos: Dbos;
  private readonly slots: SlotQueues;
  private readonly workflow: () => Promise<string>;
  private readonly store: PostgresRunStore;
  /** DBOS's own connections (see launch). */
  private readonly pool: pg.Pool;
  private readonly secrets: readonly string[];
  private readonly warn: (message: string) => void;

  private constructor(parts: {
    dbos: Dbos;
    workflow: () => Promise<string>;
    slots: (runId: string, holder: string) => Promise<string>;
    store: PostgresRunStore;
    pool: pg.Pool;
    secrets: readonly string[];
    warn: (message: string) => void;
  }) {
    this.dbos = parts.dbos;
    this.workflow = parts.workflow;
    this.store = parts.store;
    this.pool = parts.pool;
    this.secrets = parts.secrets;
    this.warn = parts.warn;
    this.slots = new SlotQueues(parts.dbos, parts.slots, parts.store, parts.warn);
  }

  /**
   * Loads DBOS and launches it with this replica's id as its executor id, under a lock: its launch
   * migrates its tables, taking no lock of its own, and replicas starting together on a fresh database
   * would fail. Then starts claiming the runs of dead replicas.
   */
  static async launch(options: DbosEngineOptions): Promise<DbosEngine> {
    if (current !== undefined) throw new Error('hatchery-mcp: one durable engine per process');
    const warn = options.warn ?? ((m: string) => process.stderr.write(`hatchery-mcp: ${m}\n`));
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    const secrets = [...options.secrets];
    const line = (entry: unknown): string =>
      redactText(entry instanceof Error ? entry.message : String(entry), secrets, { authHeaders: true });
    const notice = (entry: unknown): void => {
      const text = line(entry);
      if (!ROUTINE.test(text)) warn(`engine: ${text}`);
    };
    // A pool of its own, given to DBOS: the one DBOS makes runs a statement on each new connection
    // without waiting for it, and pg warns about that on stderr at every start.
    const pool = new pg.Pool({ connectionString: options.url, max: 10, connectionTimeoutMillis: 10_000 });
    pool.on('error', () => {});
    DBOS.setConfig({
      name: APP_NAME,
      systemDatabaseUrl: options.url,
      systemDatabasePool: pool,
      applicationVersion: RUN_FORMAT_VERSION,
      executorID: options.store.replicaId,
      // DBOS's own lines go to stderr (stdout is the MCP protocol's), without secrets.
      logger: {
        info: () => {},
        debug: () => {},
        warn: notice,
        error: notice,
      },
      // Slot queues are polled by servers only: a `run` command that took a slot would leave it.
      listenQueues: options.claims ? undefined : [],
    });
    const workflow = DBOS.registerWorkflow(runWorkflow, { name: RUN_WORKFLOW });
    const slots = DBOS.registerWorkflow(slotWorkflow, { name: SLOT_WORKFLOW });
    const engine = new DbosEngine({ dbos: DBOS, workflow, slots, store: options.store, pool, secrets, warn });
    current = engine;
    try {
      // Its migrations run at launch (their lines through the logger above) and take no lock.
      await locked(options.store.pool, () => DBOS.launch());
    } catch (err) {
      current = undefined;
      await pool.end().catch(() => {});
      throw err;
    }
    if (options.claims) {
      engine.serves = true;
      await DBOS.registerQueue(RECOVERED_QUEUE, { onConflict: 'always_update' });
      engine.startClaims();
    }
    return engine;
  }

  attach(recover: (runId: string, steps: DurableSteps) => Promise<unknown>): void {
    this.recoverRun = recover;
    this.attached();
  }

  start(
    runId: string,
    attempt: number,
    body: (steps: DurableSteps) => Promise<RunResult>,
    signal?: AbortSignal,
  ): Promise<RunResult> {
    const workflowID = workflowOf(runId, attempt);
    return new Promise<RunResult>((resolve, reject) => {
      let outcome: { result: RunResult } | { error: unknown } | undefined;
      const run = async (steps: DurableSteps) => {
        try {
          outcome = { result: await body(steps) };
          return 'succeeded';
        } catch (err) {
          outcome = { error: err };
          if (isShutdown(err) || this.closed) {
            // A stopping process leaves its runs to recovery: the caller hears now, the workflow
            // never ends here.
            reject(err);
            await new Promise(() => {});
          }
          return 'failed';
        }
      };
      this.local.set(workflowID, { body: run, signal });
      // A stopping server's caller hears at once; the workflow is left as it stands, its step in
      // flight never checkpointed (DbosSteps), for the replica that takes the run over.
      signal?.addEventListener(
        'abort',
        () => {
          if (isShutdown(signal.reason)) reject(signal.reason);
        },
        { once: true },
      );
      // The caller hears once the workflow has ended in the database: a process that exits right
      // after must not leave it pending, to be run again.
      this.dbos
        .startWorkflow(this.workflow, { workflowID })()
        .then((handle) => handle.getResult())
        .then(
          () => {
            if (outcome === undefined) reject(new Error(`run ${runId} was not run by this process`));
            else if ('result' in outcome) resolve(outcome.result);
            else reject(outcome.error);
          },
          (err: unknown) => {
            this.local.delete(workflowID);
            reject(outcome !== undefined && 'error' in outcome ? outcome.error : err);
          },
        );
    });
  }

  slot(limit: SlotLimit, runId: string, signal: AbortSignal): Promise<() => void> {
    return this.slots.take(limit, runId, signal);
  }

  /** The body of a run's workflow: the run started here, or one the engine recovers. */
  async execute(): Promise<string> {
    const id = this.dbos.workflowID;
    if (id === undefined) throw new Error('hatchery-mcp: a run workflow without a workflow id');
    const local = this.local.get(id);
    if (local !== undefined) {
      this.local.delete(id);
      return local.body(this.steps(id, { signal: local.signal }));
    }
    if (!this.serves) {
      // DBOS's internal queue, which a restart's recovery uses, is polled by every process: a run
      // given to one that is no server goes back, to the servers' queue; this execution stops here.
      await this.dbos.resumeWorkflow(id, { queueName: RECOVERED_QUEUE });
      return new Promise<string>(() => {});
    }
    await this.ready;
    const [runId] = runOf(id);
    try {
      await this.recoverRun!(runId, this.steps(id, { replaying: true }));
      return 'succeeded';
    } catch (err) {
      if (isShutdown(err) || this.closed) await new Promise(() => {});
      // Cancelled since its process died (the store ended it so): the workflow ends, nothing to say.
      const now = await this.store.read(runId).catch(() => undefined);
      if (now?.summary.status === 'cancelled') return 'cancelled';
      // The run's journal says how it ended (a refusal to resume says why).
      this.warn(`run ${id} could not be run again after its process died: ${(err as Error).message}`);
      return 'failed';
    }
  }

  /** The steps of an execution of workflow `workflowID`, the steps inside its steps kept in the store. */
  private steps(workflowID: string, options: StepsOptions): DbosSteps {
    const [runId, attempt] = runOf(workflowID);
    const pool = this.store.pool;
    const memos: StepMemos = {
      load: () => keptSteps(pool, runId, attempt),
      // A call that was made is not failed for want of its memo: at worst a recovery makes it again.
      save: (key, name, outcome) =>
        keepStep(pool, runId, attempt, key, { name, outcome }).catch((err: unknown) =>
          this.warn(`run ${runId}: a step's outcome could not be kept: ${(err as Error).message}`),
        ),
    };
    return new DbosSteps(this.dbos, { ...options, secrets: this.secrets, memos });
  }

  /** Claims the runs of dead replicas, and frees run slots nobody uses, every third of the heartbeat timeout. */
  private startClaims(): void {
    const every = Math.max(100, Math.floor(this.store.heartbeatTimeoutMs / 3));
    const tick = async (): Promise<void> => {
      try {
        for (const run of await this.store.claimOthers()) {
          if (this.closed) return;
          const workflowID = workflowOf(run.id, run.attempts);
          // A run the claim found cancelled (its owner died before it saw the cancel): so is its workflow.
          if (run.status === 'cancelled') await this.dbos.cancelWorkflow(workflowID);
          else await this.dbos.resumeWorkflow(workflowID, { queueName: RECOVERED_QUEUE });
        }
        await this.slots.sweep();
      } catch (err) {
        if (!this.closed)
          this.warn(`claiming the runs of stopped replicas failed: ${(err as Error).message}`);
      }
    };
    this.claims = setInterval(() => void tick(), every);
    this.claims.unref();
    void tick();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.claims) clearInterval(this.claims);
    // Runs still going stay PENDING: this replica recovers them when it starts again, or another
    // replica once this one's heartbeat is old.
    await this.dbos.shutdown();
    await this.pool.end().catch(() => {});
    current = undefined;
  }
}

/** The workflow of attempt `attempt` of run `runId`: the run id itself for the first, `<id>:<n>` after. */
export function workflowOf(runId: string, attempt: number): string {
  return attempt > 1 ? `${runId}:${attempt}` : runId;
}

/** The run and attempt of a run's workflow id (see workflowOf). */
function runOf(workflowID: string): [string, number] {
  const [runId, attempt] = workflowID.split(':');
  return [runId!, attempt === undefined ? 1 : Number(attempt)];
}

/**
 * Runs `fn` holding a session advisory lock of the database (one client of `pool`). Waits by trying
 * again, never in a blocking lock call: DBOS's migrations create indexes CONCURRENTLY, which wait for
 * every statement in flight, a blocked lock call of another replica included, and that would deadlock.
 */
async function locked<T>(pool: pg.Pool, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    for (;;) {
      const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [
        MIGRATION_LOCK,
      ]);
      if (got.rows[0]?.ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
