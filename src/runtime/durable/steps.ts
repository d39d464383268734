/**
 * A run's steps on DBOS: each is `DBOS.runStep`, its outcome (a value or an error) stored as data, so
 * that a run DBOS executes again after a crash gets the same values and the same HatcheryErrors back.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { type ErrorCode, HatcheryError, isShutdown } from '../../core/errors.js';
import type { DurableSteps, RunListener, RunState, SpendDelta } from '../../engine/contracts.js';
import { ReplayFilter } from './replay.js';

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
 * Where the steps made inside a step are kept until the run ends (the store's `step_memos`): DBOS
 * checkpoints a step when it ends, so without them a branch a crash cut short would make every call
 * it had made again.
 */
export interface StepMemos {
  /** What an earlier execution of the workflow kept, by key: each step's name and outcome as JSON. */
  load(): Promise<ReadonlyMap<string, { name: string; outcome: string }>>;
  /** Keeps a step's outcome under `key`. */
  save(key: string, name: string, outcome: string): Promise<void>;
}

/** How an execution's steps are made (see DbosSteps). */
export interface StepsOptions {
  /** The execution runs the run again after its process died: it starts by replaying. */
  replaying?: boolean;
  /** Secret values (the environment's): replaced in what a step stores, which the run then sees. */
  secrets?: readonly string[];
  /** The run's signal: a step it ends because the server stops is never checkpointed (see make). */
  signal?: AbortSignal;
  /** Where the steps inside a step are kept; without it they are made again with their step. */
  memos?: StepMemos;
}

/**
 * The step under way: what it spent so far, its key (`3`, then `3.0`, `3.0.1` for the steps inside
 * it, in the order they start), and the number of the next step made inside it.
 */
interface Frame {
  /** The execution whose step it is. */
  readonly owner: DbosSteps;
  readonly tally: SpendDelta;
  readonly key: string;
  next: number;
  readonly parent: Frame | undefined;
  /** A step made again after a crash, with steps kept inside it: its replay, until one is made for real. */
  filter?: ReplayFilter;
}

/** What an earlier execution kept: the steps by key, and the keys of the steps that hold any of them. */
interface Kept {
  steps: ReadonlyMap<string, { name: string; outcome: string }>;
  holders: ReadonlySet<string>;
}

/**
 * The step under way. One for the process: Node keeps every AsyncLocalStorage ever used and visits
 * each at every new promise, so one per execution made each run slower than the last.
 */
const frames = new AsyncLocalStorage<Frame>();

/**
 * The steps of one execution of a run's workflow. An execution that recovers a run starts by
 * replaying: events are held back until a step runs for real (see ReplayFilter). A step made inside a
 * step (a branch's calls) is no DBOS step, as DBOS numbers steps in the order they start and branches
 * run at once: it is kept under a key made of its place in the steps that enclose it, the same on
 * every execution, and an execution that makes the enclosing step again takes it from there.
 */
export class DbosSteps implements DurableSteps {
  private readonly filter: ReplayFilter | undefined;
  /** Number of the next step of the workflow (DBOS's own order). */
  private next = 0;
  /** What an earlier execution kept, loaded when a step is made again in a replaying execution. */
  private kept: Promise<Kept> | undefined;
  /** The run's listener, as the engine gave it (see listen). */
  private listener: RunListener | undefined;
  /** The run's state, whose meter and step count take the spend of steps answered from checkpoints. */
  private state: Pick<RunState, 'meter' | 'steps'> | undefined;
  private readonly secrets: readonly string[];

  constructor(
    private readonly dbos: StepRunner,
    private readonly options: StepsOptions = {},
  ) {
    this.filter = options.replaying ? new ReplayFilter() : undefined;
    this.secrets = options.secrets ?? [];
  }

  step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const outer = this.frame();
    if (outer !== undefined) return this.inner(outer, name, fn);
    const key = String(this.next++);
    let ran = false;
    const made = (): Promise<Outcome<T>> => {
      ran = true;
      this.filter?.live();
      return this.make(key, fn, undefined);
    };
    return this.dbos.runStep(made, { name }).then((o) => this.settled(o, !ran));
  }

  /** A step inside step `outer`: taken from what an earlier execution kept, or made and kept. */
  private async inner<T>(outer: Frame, name: string, fn: () => Promise<T>): Promise<T> {
    const key = `${outer.key}.${outer.next++}`;
    const memos = this.options.memos;
    const kept = this.kept === undefined ? undefined : (await this.kept).steps.get(key);
    // A step of another name there: the run went another way than before; it is made again.
    const earlier = kept?.name === name ? (JSON.parse(kept.outcome) as Outcome<T>) : undefined;
    if (earlier === undefined) {
      // Made for real: the steps enclosing it replay no more.
      for (let f: Frame | undefined = outer; f !== undefined; f = f.parent) f.filter?.live();
    }
    const o = earlier ?? (await this.make(key, fn, outer));
    if (earlier === undefined && memos !== undefined) await memos.save(key, name, JSON.stringify(o));
    if (o.spent !== undefined) addSpend(outer.tally, o.spent);
    return this.settled(o, earlier !== undefined);
  }

  /** Runs `fn` as step `key`: its outcome, as stored. */
  private async make<T>(key: string, fn: () => Promise<T>, parent: Frame | undefined): Promise<Outcome<T>> {
    const frame: Frame = { owner: this, tally: {}, key, next: 0, parent };
    const memos = this.options.memos;
    // Only an execution that replays can find anything kept: a first one never looks.
    if (this.filter !== undefined && memos !== undefined) {
      this.kept ??= memos.load().then(holding);
      if ((await this.kept).holders.has(key)) {
        frame.filter = new ReplayFilter(this.filter.ended);
        frame.filter.next = this.listener;
      }
    }
    let outcome: Outcome<T>;
    try {
      outcome = { ok: await frames.run(frame, fn) };
    } catch (err) {
      // Ended by a stopping server: the replica that takes the run over makes the step again, so
      // it must not be checkpointed as failed; it never ends here (the process exits).
      const signal = this.options.signal;
      if (signal?.aborted && isShutdown(signal.reason)) await new Promise(() => {});
      outcome = stored(err);
    }
    if (Object.keys(frame.tally).length > 0) outcome.spent = frame.tally;
    // The checkpoint is a record of the run like its journal: it never holds a secret. DBOS hands
    // the run what it stored, so the run sees the same value now and after a crash.
    return this.secrets.length > 0 ? (withoutSecrets(outcome, this.secrets) as Outcome<T>) : outcome;
  }

  /**
   * What a step's outcome gives the run. A step answered from a checkpoint counts again what it spent
   * the first time, as the run's meter and step count must hold what its steps did.
   */
  private settled<T>(o: Outcome<T>, replayed: boolean): T {
    if (replayed && o.spent !== undefined && this.state !== undefined) {
      this.state.meter.add(o.spent);
      this.state.steps += o.spent.steps ?? 0;
    }
    if ('error' in o) throw thrown(o.error);
    return o.ok;
  }

  /** This execution's step under way, if any. */
  private frame(): Frame | undefined {
    const frame = frames.getStore();
    return frame?.owner === this ? frame : undefined;
  }

  spent(delta: SpendDelta): void {
    const frame = this.frame();
    if (frame !== undefined) addSpend(frame.tally, delta);
  }

  track(state: Pick<RunState, 'meter' | 'steps'>): void {
    this.state = state;
    state.meter.observer = (delta) => this.spent(delta);
  }

  listen(listener: RunListener): RunListener {
    this.listener = listener;
    if (this.filter === undefined) return listener;
    const top = this.filter.wrap(listener);
    // An event of a step being made again goes through its replay while that lasts.
    return (e) => {
      const replay = this.frame()?.filter;
      if (replay?.active) replay.take(e);
      else top(e);
    };
  }

  recorded(records: readonly Readonly<Record<string, unknown>>[]): void {
    this.filter?.recorded(records);
  }
}

/** The kept steps, and every key a kept key starts with (`3`, `3.0` for `3.0.1`). */
function holding(steps: ReadonlyMap<string, { name: string; outcome: string }>): Kept {
  const holders = new Set<string>();
  for (const key of steps.keys()) {
    for (let i = key.indexOf('.'); i !== -1; i = key.indexOf('.', i + 1)) holders.add(key.slice(0, i));
  }
  return { steps, holders };
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
