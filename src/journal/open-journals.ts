import type { LineJournal } from './line-journal.js';

/** What a store does when the journals it has open change. */
export interface OpenJournalsHooks {
  /** A run is owned now (a journal was opened). */
  opened(): void;
  /** A journal ended; `running` journals are left open. */
  ended(running: number): void;
}

/**
 * The journals a store has open: the running runs this process owns, and the ones that ended until
 * their last records are written (a read of such a run waits for them).
 */
export class OpenJournals {
  /** Journals of running runs this process owns, by run id. */
  readonly live = new Map<string, LineJournal>();
  /** Journals that ended, until their last records are written: what each one's end() returned. */
  private readonly ending = new Map<string, Promise<void>>();

  constructor(private readonly hooks: OpenJournalsHooks) {}

  /** Keeps `j` open until it ends (give `onEnd` as its LineJournalOptions.onEnd). */
  add(j: LineJournal): void {
    this.live.set(j.id, j);
    this.hooks.opened();
  }

  /** A journal ended: its last records are written on the next turn (see LineJournal.end). */
  readonly onEnd = (j: LineJournal, written: Promise<void>): void => {
    if (this.live.get(j.id) === j) this.live.delete(j.id);
    this.ending.set(j.id, written);
    void written.then(() => {
      if (this.ending.get(j.id) === written) this.ending.delete(j.id);
    });
    this.hooks.ended(this.live.size);
  };

  /** Resolves when everything appended so far is written (every open journal). */
  async idle(): Promise<void> {
    await Promise.all([...[...this.live.values()].map((j) => j.flush()), ...this.ending.values()]);
  }

  /** Resolves when what run `id`'s journal was given so far is written. */
  async settle(id: string): Promise<void> {
    await this.live.get(id)?.flush();
    await this.ending.get(id);
  }
}
