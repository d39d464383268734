import type { Tool } from '../engine/contracts.js';

/**
 * The tool lists that JsTools.resolveList's promises resolved with, once they have. Its own module:
 * the call path (invoke.ts) reads it without loading js.ts and zod.
 */
const settledLists = new WeakMap<Promise<Tool[]>, Tool[]>();

/**
 * The last list asked for, kept beside the map: the calls of a fan-out or a loop ask for one list
 * again and again, and a comparison costs less than a lookup. Lists are one per tool and tiny.
 */
let lastPromise: Promise<Tool[]> | undefined;
let lastTools: Tool[] | undefined;

/** Records that `p` resolved with `tools`. */
export function settleList(p: Promise<Tool[]>, tools: Tool[]): void {
  settledLists.set(p, tools);
}

/**
 * The tools a promise from `JsTools.resolveList` resolved with, once it has: a call of a module the
 * run has already looked at takes them without waiting a turn for the promise.
 */
export function settledList(p: Promise<Tool[]>): Tool[] | undefined {
  if (p === lastPromise) return lastTools;
  const tools = settledLists.get(p);
  if (tools !== undefined) {
    lastPromise = p;
    lastTools = tools;
  }
  return tools;
}
