/**
 * The dataflow's states: two bitsets per point over the analysed variables ("set on every path" and
 * "set on some path"), and the few operations on them.
 */

/** What a dataflow point knows of one variable: set on every path, on some, or on none. */
export type Presence = 'all' | 'some' | 'none';

/** The variables set at one point: two bitsets over the analysed variables. */
export interface FlowState {
  readonly must: Uint32Array;
  readonly may: Uint32Array;
}

/** Meets a source state (plus `add`) into must/may; returns true (the entry counts as reached). */
export function meetInto(
  must: Uint32Array,
  may: Uint32Array,
  w: number,
  srcMust: Uint32Array,
  mAt: number,
  srcMay: Uint32Array,
  yAt: number,
  add?: Uint32Array,
): true {
  for (let k = 0; k < w; k++) {
    const plus = add ? add[k]! : 0;
    must[k]! &= srcMust[mAt + k]! | plus;
    may[k]! |= srcMay[yAt + k]! | plus;
  }
  return true;
}

export function setBit(a: Uint32Array, at: number, bit: number): void {
  a[at + (bit >>> 5)]! |= 1 << (bit & 31);
}

export function hasBit(a: Uint32Array, at: number, bit: number): boolean {
  return (a[at + (bit >>> 5)]! & (1 << (bit & 31))) !== 0;
}
