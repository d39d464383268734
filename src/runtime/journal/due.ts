/**
 * The journals with records to write on the event loop's next turn, flushed together by one
 * setImmediate (a thousand runs in flight make one callback per turn, not one each), and the one
 * promise of that turn for whoever waits for the writes: a run's end makes none of its own (a
 * promise, its resolver and an entry in the store's map per served call, which nobody awaited).
 */

import { commitWrites, threadDrained } from './journal-file.js';

/** What the turn calls on each journal due. */
export interface DueJournal {
  turn(): void;
}

/** Resolved at once: nothing is due. */
const WRITTEN: Promise<void> = Promise.resolve();

let due: DueJournal[] = [];
let scheduled = false;
/** A turn is calling its journals now. */
let flushing = false;
/** The promise of the coming turn's end, made when someone first asks (see written). */
let waiting: { promise: Promise<void>; resolve: () => void } | undefined;

function flushDue(): void {
  scheduled = false;
  const list = due;
  due = [];
  flushing = true;
  try {
    // A journal's turn catches what its records throw: one journal never costs the others theirs.
    for (const j of list) j.turn();
  } finally {
    commitWrites();
    flushing = false;
    // The journals of this turn are written (or with the write thread); a journal made due meanwhile
    // waits for the next turn's.
    if (!scheduled) {
      const w = waiting;
      waiting = undefined;
      if (w !== undefined) {
        const drained = threadDrained();
        if (drained === undefined) w.resolve();
        else void drained.then(w.resolve);
      }
    }
  }
}

/** Adds `j` to the next turn's journals (the caller adds each journal once per turn). */
export function addDue(j: DueJournal): void {
  due.push(j);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushDue);
  }
}

/**
 * Resolves once every journal due now has had its turn (its records written, an ended journal's file
 * closed); at once when none is due.
 */
export function dueWritten(): Promise<void> {
  if (!scheduled && !flushing) return threadDrained() ?? WRITTEN;
  if (waiting === undefined) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    waiting = { promise, resolve };
  }
  return waiting.promise;
}
