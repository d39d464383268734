import type { Tool } from '../engine/contracts.js';

/**
 * The tool lists that JsTools.resolveList's promises resolved with, once they have. Its own module:
 * the call path (invoke.ts) reads it without loading js.ts and zod.
 */
const settledLists = new WeakMap<Promise<Tool[]>, Tool[]>();

/** Records that `p` resolved with `tools`. */
export function settleList(p: Promise<Tool[]>, tools: Tool[]): void {
  settledLists.set(p, tools);
}

/**
 * The tools a promise from `JsTools.resolveList` resolved with, once it has: a call of a module the
 * run has already looked at takes them without waiting a turn for the promise.
 */
export function settledList(p: Promise<Tool[]>): Tool[] | undefined {
  return settledLists.get(p);
}
