import { mkdirSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import { secretValues } from '../core/secrets.js';
import { CancelWatch } from './cancel-watch.js';
import { foldRun, ownerOf, parseJournal, storedRun } from './fold.js';
import { JournalFile } from './journal-file.js';
import { Extra, LineJournal } from './line-journal.js';
import { OpenJournals } from './open-journals.js';
import { ownerAlive, processOwner } from './owner.js';
import { isRunId, readRunFile, runIds, runNotFound, withLock } from './run-files.js';
import { endedByLastLine } from './run-tail.js';
import { runsCommandLine } from './state-dir.js';
import {
  cancellable,
  JOURNAL_VERSION,
  type RunFilter,
  type RunJournal,
  type RunMeta,
  type RunOwner,
  type RunStore,
  type RunStoreOptions,
  type RunSummary,
  type StoredRun,
} from './store.js';
import { PRUNE_EVERY, PruneSchedule } from './upkeep.js';
import { journalWriteFailed } from './write-errors.js';

/** Folders pruned by this process already (prune on open runs once per process). */
const prunedOnOpen = new Set<string>();
const DAY_MS = 86_400_000;
/** How a FileRunStore keeps and prunes runs. */
export interface FileRunStoreOptions extends RunStoreOptions {
  /** A run owned on another host whose file has not changed for this long is claimable (default 120 000 ms). */
  staleMs?: number;
  /**
   * A prune comes before its ten minutes once the folder holds this many files more than the runs kept
   * and this many runs were created since the last one (default 5000).
   */
  pruneEvery?: number;
  /** A journal file larger than this is not read: listing skips it, reading it is an error (default 256 MiB). */
  maxFileBytes?: number;
}

/** Default cap of a journal file read (a run of 1,000 nodes with 100 KB outputs each stays well below). */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

/**
 * The embedded run store: one JSON-lines journal per run, `<dir>/<id>.jsonl`. Cancels of runs owned
 * by another process go through a `<id>.cancel` marker its owner polls for; claims of interrupted
 * runs take an exclusive `<id>.lock` file so two processes never claim the same run.
 */
export class FileRunStore implements RunStore {
  readonly location: string;
  /** The age limit of pruning: finished runs younger than this are kept (unless over the count limit). */
  readonly retentionMs: number;
  /** The folder with its separator, which run file names follow. */
  private readonly prefix: string;
  private secrets: string[];
  private readonly maxFileBytes: number;
  private readonly staleMs: number;
  /** Journals of running runs this process owns, and of runs that ended until they are written. */
  private readonly journals: OpenJournals;
  private readonly live: ReadonlyMap<string, LineJournal>;
  /** Cancels asked by other processes for the runs this one owns. */
  private readonly watch: CancelWatch;
  private made = false;
  /** When the folder is pruned. */
  private readonly upkeep: PruneSchedule;

  constructor(dir: string, options: FileRunStoreOptions = {}) {
    this.location = path.resolve(dir);
    this.prefix = this.location.endsWith(path.sep) ? this.location : `${this.location}${path.sep}`;
    this.secrets = secretValues(options.env ?? process.env, options.secrets ?? []);
    this.retentionMs = (options.maxAgeDays ?? 30) * DAY_MS;
    this.staleMs = options.staleMs ?? 120_000;
    this.maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
    this.journals = new OpenJournals({
      opened: () => this.watch.start(),
      ended: (running) => {
        if (running === 0) this.watch.stop();
        this.upkeep.ended();
      },
    });
    this.live = this.journals.live;
    this.upkeep = new PruneSchedule({
      location: this.location,
      prefix: this.prefix,
      maxRuns: options.maxRuns ?? 1000,
      maxAgeMs: this.retentionMs,
      pruneEvery: options.pruneEvery ?? PRUNE_EVERY,
      live: (id) => this.live.has(id),
      // As stored: a run whose owner died is not finished work to prune, and an unreadable file is no run.
      status: async (id) => (await this.stored(id).catch(() => undefined))?.summary.status,
      idle: () => this.idle(),
    });
    this.watch = new CancelWatch({
      prefix: this.prefix,
      live: this.live,
      pollMs: options.pollMs ?? 500,
      staleMs: this.staleMs,
      count: this.upkeep,
    });
  }

  /** Adds secret values (the Runtime's environment) that must never reach a journal. */
  addSecrets(values: readonly string[]): void {
    const all = new Set([...this.secrets, ...values]);
    this.secrets = [...all].sort((a, b) => b.length - a.length);
  }

  /** Opens the file of run `id` for its journal; a failed write is said once on stderr. */
  private sink(id: string): (failed: (err: unknown) => void) => JournalFile {
    const file = this.fileOf(id);
    return (failed) =>
      new JournalFile(file, (err) => {
        failed(err);
        journalWriteFailed(file, err);
      });
  }

  /** A run's file: `id` is a checked UUID, so no path.join (which normalizes the path on every run). */
  private fileOf(id: string): string {
    return `${this.prefix}${id}.jsonl`;
  }

  create(meta: RunMeta): RunJournal {
    if (!isRunId(meta.id)) {
      throw new HatcheryError(
        'USAGE',
        `run id "${meta.id}" is not a UUID; leave runId unset to get a fresh one`,
      );
    }
    if (!this.made) {
      try {
        mkdirSync(this.location, { recursive: true, mode: 0o700 });
      } catch (err) {
        throw new HatcheryError(
          'FILE_IO',
          `cannot create the run state folder ${this.location}: ${(err as Error).message}; choose another with --state DIR (or HATCHERY_STATE), or run without a journal (--no-journal)`,
        );
      }
      this.made = true;
    }
    // The meta as it is (runMeta makes one per run, and nobody changes it after): its record is built
    // on the next turn of the event loop.
    const j = new LineJournal(this.sink(meta.id), meta.id, {
      secrets: this.secrets,
      onEnd: this.journals.onEnd,
      first: new Extra('run_start', meta as unknown as Record<string, unknown>),
    });
    this.own(j);
    this.upkeep.created(meta.id);
    if (!prunedOnOpen.has(this.location)) {
      prunedOnOpen.add(this.location);
      // The run that opened the folder is starting, not one of the finished runs to keep.
      this.upkeep.background([meta.id]);
    }
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
    if ((await this.text(id)) === undefined) throw runNotFound(id, this.location);
    // Under the claim lock, and the `resumed` record on disk before the lock is let go: of two
    // processes resuming one run at once, the second sees it running and refuses.
    const journal = await this.locked(id, async (text) => {
      const stored = storedRun(text);
      // A run still `running` in its file whose owner is gone was interrupted and may go on.
      if (
        stored?.summary.status === 'running' &&
        (await this.ownerAlive(id, ownerOf(stored.meta, stored.records)))
      ) {
        throw new HatcheryError(
          'RESUME_REFUSED',
          `run ${id} is running again in another process (it was resumed meanwhile); wait for it, or cancel it with: ${runsCommandLine(['cancel', id], this.location)}`,
          { run: id },
        );
      }
      const parsed = parseJournal(text);
      const lead = text === '' || text.endsWith('\n') ? '' : '\n';
      const j = new LineJournal(this.sink(id), id, {
        secrets: this.secrets,
        onEnd: this.journals.onEnd,
        first: new Extra('resumed', { ...fields, owner: processOwner }),
        seen: parsed.strings.keys(),
        lead,
      });
      this.own(j);
      await j.flush();
      return j;
    });
    if (!journal) {
      throw new HatcheryError(
        'RESUME_REFUSED',
        `run ${id} is being claimed, resumed or cancelled by another process right now; try again in a moment`,
        { run: id },
      );
    }
    return journal;
  }

  /** A run as stored, except that a run still `running` whose owner is gone reads as `interrupted`. */
  async read(id: string): Promise<StoredRun | undefined> {
    const run = await this.stored(id);
    if (run?.summary.status === 'running' && !(await this.ownerAlive(id, ownerOf(run.meta, run.records)))) {
      // Its journal is left as it is: claiming it (writing `interrupted`) is the server's start-up and
      // resume's business; a reader only must not call a dead run running.
      run.summary.status = 'interrupted';
    }
    return run;
  }

  /**
   * A run exactly as its journal says; a file that holds text but no readable `run_start` line (a
   * damaged or planted file) is an error, undefined is only a run that does not exist (yet).
   */
  private async stored(id: string): Promise<StoredRun | undefined> {
    if (!isRunId(id)) return undefined;
    await this.settle(id);
    const text = await this.text(id);
    if (text === undefined) return undefined;
    const run = storedRun(text);
    if (run === undefined && text.includes('\n')) {
      throw new HatcheryError(
        'FILE_IO',
        `run ${id} in ${this.location} is not read: its first line is not a readable run_start record (a damaged file, or one not written by hatchery-mcp)`,
        { run: id, state: this.location },
      );
    }
    return run;
  }

  async list(filter: RunFilter = {}): Promise<RunSummary[]> {
    // What this process appended so far is part of the answer.
    await this.idle();
    const prefix = filter.idPrefix;
    const all = await runIds(this.location);
    const ids = prefix === undefined ? all : all.filter((id) => id.startsWith(prefix));
    const runs: RunSummary[] = [];
    for (let i = 0; i < ids.length; i += 32) {
      const batch = await Promise.all(
        ids.slice(i, i + 32).map((id) =>
          this.read(id).catch((err: Error) => {
            // One unreadable file (too large, no permission) must not hide every other run.
            filter.skipped?.(id, err.message);
            return undefined;
          }),
        ),
      );
      for (const r of batch) {
        if (!r) continue;
        const s = r.summary;
        if (filter.status !== undefined && s.status !== filter.status) continue;
        if (filter.hatchery !== undefined && s.hatchery !== filter.hatchery) continue;
        runs.push(s);
      }
    }
    runs.sort((a, b) => b.startedAt - a.startedAt);
    return runs.slice(0, filter.limit ?? 50);
  }

  async claimInterrupted(only?: (run: RunMeta) => boolean): Promise<RunSummary[]> {
    const claimed: RunSummary[] = [];
    for (const id of await runIds(this.location)) {
      if (this.live.has(id)) continue;
      // Most runs ended long ago: their last line says so, without reading and folding the whole file.
      if (endedByLastLine(this.fileOf(id))) continue;
      // An unreadable file is nobody's run to claim; the others still are.
      const run = await this.stored(id).catch(() => undefined);
      if (run?.summary.status !== 'running') continue;
      if (only && !only(run.meta)) continue;
      if (await this.ownerAlive(id, ownerOf(run.meta, run.records))) continue;
      const summary = await this.locked(id, async (text) => {
        const now = storedRun(text);
        if (now?.summary.status !== 'running') return undefined;
        const previous = ownerOf(now.meta, now.records);
        if (await this.ownerAlive(id, previous)) return undefined;
        return this.appendRecord(id, text, now, { type: 'interrupted', owner: previous, by: processOwner });
      });
      if (summary) claimed.push(summary);
    }
    return claimed;
  }

  async cancel(id: string): Promise<RunSummary | undefined> {
    const run = await this.read(id);
    if (!run) return undefined;
    const s = run.summary;
    if (s.status === 'running') {
      if (this.live.has(id)) {
        this.watch.fire(id);
        return s;
      }
      if (await this.ownerAlive(id, ownerOf(run.meta, run.records))) {
        // The owner notices the marker within its poll interval and aborts the run.
        await writeFile(this.watch.markerOf(id), `${JSON.stringify(processOwner)}\n`);
        return s;
      }
    } else if (!cancellable(s.status)) {
      return s;
    }
    // Nobody runs it: it ends as cancelled now.
    const ended = await this.locked(id, async (text) => {
      const now = storedRun(text);
      if (!now) return undefined;
      if (!cancellable(now.summary.status)) return now.summary;
      return this.appendRecord(id, text, now, {
        type: 'run_end',
        status: 'cancelled',
        error: 'the run was cancelled',
        code: 'ABORTED',
      });
    });
    return ended ?? (await this.read(id))?.summary;
  }

  onCancel(listener: (id: string) => void): void {
    this.watch.onCancel(listener);
  }

  /** Drops finished runs beyond the count and age limits; `except` runs are starting, left out. */
  prune(except: Iterable<string> = []): Promise<number> {
    return this.upkeep.prune(except);
  }

  async close(): Promise<void> {
    this.watch.stop();
    await this.idle();
  }

  /** Resolves when everything appended so far is written (every journal of this store). */
  idle(): Promise<void> {
    return this.journals.idle();
  }

  private settle(id: string): Promise<void> {
    return this.journals.settle(id);
  }

  /** The text of run `id`'s file; undefined when there is none. */
  private text(id: string): Promise<string | undefined> {
    return readRunFile(this.fileOf(id), id, this.location, this.maxFileBytes);
  }

  private own(j: LineJournal): void {
    this.journals.add(j);
  }

  /** True when `owner` still runs `id` (see ownerAlive). */
  private ownerAlive(id: string, owner: RunOwner | undefined): Promise<boolean> {
    return ownerAlive(owner, this.live.has(id), this.fileOf(id), this.staleMs);
  }

  /** Runs `fn` on the run's current text under its claim lock (see withLock). */
  private locked<T>(id: string, fn: (text: string) => Promise<T | undefined>): Promise<T | undefined> {
    return withLock(path.join(this.location, `${id}.lock`), async () => {
      const text = await this.text(id);
      return text === undefined ? undefined : await fn(text);
    });
  }

  /**
   * Appends one record to a run file this process does not own (claim, cancel), after `text`, which
   * holds `run`; the run's summary with it.
   */
  private async appendRecord(
    id: string,
    text: string,
    run: StoredRun,
    fields: { type: string; [field: string]: unknown },
  ): Promise<RunSummary> {
    const rec = { v: JOURNAL_VERSION, at: Date.now(), ...fields };
    const lead = text === '' || text.endsWith('\n') ? '' : '\n';
    await appendFile(this.fileOf(id), `${lead}${JSON.stringify(rec)}\n`);
    return foldRun(run.meta, [...run.records, rec]);
  }
}

export { isRunId, runNotFound };
