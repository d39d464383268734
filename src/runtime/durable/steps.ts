/**
 * A run's steps on DBOS: each is `DBOS.runStep`, its outcome (a value or an error) stored as data, so
 * that a run DBOS executes again after a crash gets the same values and the same HatcheryErrors back.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { type ErrorCode, HatcheryError, isShutdown } from '../../core/errors.js';
import type { DurableSteps, RunEvent, RunListener, RunState, SpendDelta } from '../../engine/contracts.js';

/**
 * What DBOS stores of a step: its value, or its error as data (a class would not survive the round
 * trip), and what the run spent in it when that was anything (a branch's calls and node executions).
 */
type Outcome<T> = ({ ok: T } | { error: StoredError }) & { spent?: SpendDelta };

/** An error as a step stores it: a HatcheryError's code and context, another error's name. */
interface StoredError {
  message: string;
  name?: string;
  code?: string;
  context?: Record<string, unknown>;
}

/** The part of DBOS the steps use. */
export interface StepRunner {
  runStep<R>(fn: () => Promise<R>, config: { name: string }): Promise<R>;
}

/** An error as a step stores it. */
function stored(err: unknown): Outcome<never> {
  if (err instanceof HatcheryError) {
    let context: Record<string, unknown> = {};
    try {
      context = JSON.parse(JSON.stringify(err.context)) as Record<string, unknown>;
    } catch {
      // A context JSON cannot hold: the code and message still say what failed.
    }
    return { error: { message: err.message, code: err.code, context } };
  }
  if (err instanceof Error) return { error: { message: err.message, name: err.name } };
  return { error: { message: String(err) } };
}

/** The error a stored outcome holds, as it was thrown (a HatcheryError keeps its code and context). */
function thrown(e: StoredError): Error {
  if (e.code !== undefined) return new HatcheryError(e.code as ErrorCode, e.message, e.context ?? {});
  const err = new Error(e.message);
  if (e.name !== undefined) err.name = e.name;
  return err;
}

/**
 * The steps of one execution of a run's workflow. An execution that recovers a run starts by
 * replaying: events are held back until a step runs for real (see ReplayFilter).
 */
export class DbosSteps implements DurableSteps {
  private readonly filter: ReplayFilter | undefined;
  /** What the step under way spent so far (the innermost one: steps inside a step run inline). */
  private readonly tallies = new AsyncLocalStorage<SpendDelta>();
  /** The run's state, whose meter and step count take the spend of steps answered from checkpoints. */
  private state: RunState | undefined;

  constructor(
    private readonly dbos: StepRunner,
    replaying: boolean,
    /** Secret values (the environment's): replaced in what a step stores, which the run then sees. */
    private readonly secrets: readonly string[] = [],
    /** The run's signal: a step it ends because the server stops is never checkpointed (see step). */
    private readonly signal?: AbortSignal,
  ) {
    this.filter = replaying ? new ReplayFilter() : undefined;
  }

  step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const outer = this.tallies.getStore();
    let ran = false;
    const made = async (): Promise<Outcome<T>> => {
      ran = true;
      this.filter?.live();
      let outcome: Outcome<T>;
      const tally: SpendDelta = {};
      try {
        outcome = { ok: await this.tallies.run(tally, fn) };
      } catch (err) {
        // Ended by a stopping server: the replica that takes the run over makes the step again, so
        // it must not be checkpointed as failed; it never ends here (the process exits).
        if (this.signal?.aborted && isShutdown(this.signal.reason)) await new Promise(() => {});
        outcome = stored(err);
      }
      if (Object.keys(tally).length > 0) outcome.spent = tally;
      // The checkpoint is a record of the run like its journal: it never holds a secret. DBOS hands
      // the run what it stored, so the run sees the same value now and after a crash.
      return this.secrets.length > 0 ? (withoutSecrets(outcome, this.secrets) as Outcome<T>) : outcome;
    };
    return this.dbos.runStep(made, { name }).then((o) => {
      if (o.spent !== undefined) {
        // Spent now: already counted, and part of the enclosing step's spend. Spent the first time:
        // counted again, as the run's meter and step count must hold what its steps did.
        if (outer !== undefined) addSpend(outer, o.spent);
        if (!ran && this.state !== undefined) {
          this.state.meter.add(o.spent);
          this.state.steps += o.spent.steps ?? 0;
        }
      }
      if ('error' in o) throw thrown(o.error);
      return o.ok;
    });
  }

  spent(delta: SpendDelta): void {
    const tally = this.tallies.getStore();
    if (tally !== undefined) addSpend(tally, delta);
  }

  track(state: RunState): void {
    this.state = state;
    state.meter.observer = (delta) => this.spent(delta);
  }

  listen(listener: RunListener): RunListener {
    return this.filter ? this.filter.wrap(listener) : listener;
  }

  recorded(records: readonly Readonly<Record<string, unknown>>[]): void {
    this.filter?.recorded(records);
  }
}

/** Adds `delta` to `into`, field by field. */
function addSpend(into: SpendDelta, delta: SpendDelta): void {
  for (const k of Object.keys(delta) as (keyof SpendDelta)[]) into[k] = (into[k] ?? 0) + (delta[k] ?? 0);
}

/** A copy of a JSON-like value with every secret value in its strings replaced by `[redacted]`. */
export function withoutSecrets(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    let out = value;
    for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return out;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => withoutSecrets(v, secrets));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = withoutSecrets(v, secrets);
  return out;
}

/**
 * The events of a recovering execution. Until its first step runs for real, the run replays what an
 * earlier execution did and reported: a node that ends during the replay is dropped with its start
 * when the journal holds its end, and reported when the crash lost that record (a journal writes
 * every tenth of a second). The node_starts still open when the first step runs are those of the
 * nodes the crash cut short, reported then. Every other event of the replay is dropped.
 */
export class ReplayFilter {
  private replaying = true;
  private readonly open = new Map<number, RunEvent>();
  /** The node executions the journal holds the end of, as `<path>|<seq>`. */
  private readonly ended = new Set<string>();
  private next: RunListener | undefined;

  /** Takes the node executions whose end the journal holds from its records. */
  recorded(records: readonly Readonly<Record<string, unknown>>[]): void {
    for (const r of records) {
      if (r.type === 'node_end' && typeof r.path === 'string') this.ended.add(`${r.path}|${String(r.seq)}`);
    }
  }

  wrap(listener: RunListener): RunListener {
    this.next = listener;
    return (e) => {
      if (!this.replaying) {
        listener(e);
        return;
      }
      if (e.type === 'node_start') {
        this.open.set(e.step, e);
      } else if (e.type === 'node_end') {
        const start = this.open.get(e.step);
        this.open.delete(e.step);
        // Executions not resumable one by one (path undefined) sit inside a step: never reported here.
        if (e.path === undefined || this.ended.has(`${e.path}|${e.seq}`)) return;
        if (start) listener(start);
        listener({ ...e, replayed: false });
      } else if (e.type === 'node_error') {
        this.open.delete(e.step);
      }
    };
  }

  /** A step runs for real: the nodes still open are reported, and everything after. */
  live(): void {
    if (!this.replaying) return;
    this.replaying = false;
    const next = this.next;
    if (next) for (const e of this.open.values()) next(e);
    this.open.clear();
  }
}
