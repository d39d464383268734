import { setMaxListeners } from 'node:events';
import { abortedError, watchAbort } from '../core/cancel.js';
import { formatError, HatcheryError, withContext } from '../core/errors.js';

import type { CompileContext, NodeResult, RunContext } from '../engine/contracts.js';
import { didYouMean } from '../schema/suggest.js';

/** One fan-out: `count` branches, at most `concurrency` at once; shared by parallel and map nodes. */
export interface FanOutSpec {
  readonly count: number;
  readonly concurrency: number;
  /** on_error: "continue": a failed branch's output is `error: <message>` and the others go on. */
  readonly continueOnError: boolean;
  /** Field of the node named in branch errors. */
  readonly field: string;
  /** The name of branch `i` in errors. */
  name(i: number): string;
  /** The node branch `i` starts from; errors of that node need not name it again. */
  start(i: number): string;
  /** Runs branch `i`; every await inside must honour `signal`, the fan-out's own. */
  run(i: number, signal: AbortSignal): Promise<NodeResult>;
}

// Run-level limits are not a branch's failure: recording them as an output would let every other
// branch hit the same wall, so they fail the node even with on_error: "continue". A branch waiting
// for an answer (INPUT_REQUIRED) has not failed: the run suspends.
const FATAL = new Set(['MAX_STEPS', 'MAX_DEPTH', 'BUDGET_EXHAUSTED', 'INPUT_REQUIRED']);

/** Schedules the start of the next branch: a bare microtask (queueMicrotask adds an async resource). */
const RESOLVED = Promise.resolve();

/**
 * Runs the branches of a fan-out and returns their results in branch order. The branches share one
 * AbortController, linked to the scope's signal by a single listener, so a failing branch (or a
 * cancelled run) stops all its siblings. Waits until every started branch has settled before it
 * returns or throws, so no branch keeps writing into the run after the node is over.
 *
 * Branches start one per microtask, not all in one loop: a branch that settles in microtasks (instant
 * nodes) then runs to its end while the next ones start, so only a handful are half-way at any time,
 * instead of every branch's suspended frames at once (that was most of a wide fan-out's memory, its GC
 * and its cache misses). Branches that wait (a model call, a timer) all start within the same turn of
 * the event loop as before. A branch holds no async frame of its own here: one `then` per branch.
 */
export function fanOut(scope: RunContext, spec: FanOutSpec): Promise<NodeResult[]> {
  const parent = scope.signal;
  const early = abortedError(parent);
  if (early) return Promise.reject(early);
  const n = spec.count;
  const results = new Array<NodeResult>(n);
  if (n === 0) return Promise.resolve(results);
  return new Promise<NodeResult[]>((resolve, reject) => {
    const controller = new AbortController();
    const signal = controller.signal;
    // Each in-flight branch may listen to this signal (a tool's own listener); that is expected,
    // not a leak, so Node's 10-listener warning would only be noise for wide fan-outs.
    setMaxListeners(0, signal);
    // Through watchAbort: the branches of an outer fan-out each start one of these on its signal.
    const unwatch = watchAbort(parent, () => controller.abort(parent.reason));
    const limit = Math.min(spec.concurrency, n);
    let failure: { index: number; error: unknown } | undefined;
    let next = 0;
    let running = 0;
    let over = false;
    const finish = (): void => {
      // Both the last branch to settle and a pending pump may see the end of a cancelled fan-out.
      if (over) return;
      over = true;
      unwatch();
      const cancelled = abortedError(parent);
      if (cancelled) reject(cancelled);
      else if (failure) reject(branchError(scope, spec, failure.index, failure.error));
      else resolve(results);
    };
    const settled = (): void => {
      running--;
      // A concurrency-bound fan-out (map) starts its next item as one ends.
      if (limit < n && next < n && !signal.aborted) start();
      else if (running === 0 && (next === n || signal.aborted)) finish();
    };
    const failed = (i: number, err: unknown): void => {
      // After a cancellation the siblings' errors are only echoes of it.
      if (!parent.aborted && !failure) {
        if (spec.continueOnError && !(err instanceof HatcheryError && FATAL.has(err.code))) {
          results[i] = { text: `error: ${formatError(err)}` };
        } else {
          failure = { index: i, error: err };
          controller.abort();
        }
      }
      settled();
    };
    const start = (): void => {
      const i = next++;
      running++;
      let branch: Promise<NodeResult>;
      try {
        // On a durable engine a branch is one step, started in branch order: branches that finished
        // before a crash are not run again (their own steps are inside theirs).
        const durable = scope.shared.durable;
        branch =
          durable === undefined
            ? spec.run(i, signal)
            : durable.step(`branch:${i}`, () => spec.run(i, signal));
      } catch (err) {
        branch = Promise.reject(err);
      }
      branch.then(
        (r) => {
          results[i] = r;
          settled();
        },
        (err: unknown) => failed(i, err),
      );
    };
    // The first `limit` branches, one per microtask (see above); a cancelled fan-out starts no more.
    const pump = (): void => {
      if (signal.aborted) {
        if (running === 0) finish();
        return;
      }
      start();
      if (next < limit) void RESOLVED.then(pump);
    };
    pump();
  });
}

/** `branch "<name>" failed: <where inside the branch>: <message>`, keeping the inner error's code. */
function branchError(scope: RunContext, spec: FanOutSpec, index: number, err: unknown): HatcheryError {
  const inner = withContext(err, {});
  // A branch waiting for an answer has not failed: its question (context.question) goes up as is.
  if (inner.code === 'INPUT_REQUIRED') return inner;
  const name = spec.name(index);
  const parts: string[] = [];
  const { file, node, field } = inner.context;
  if (file && file !== scope.hatchery.file) parts.push(String(file));
  if (node && node !== spec.start(index)) parts.push(`node "${String(node)}"`);
  // A field the message already names (max_steps, or a nested fan-out's branch) would only repeat it.
  if (field && inner.context.branch === undefined && !inner.message.includes(String(field)))
    parts.push(String(field));
  const where = parts.length > 0 ? `${parts.join(': ')}: ` : '';
  return new HatcheryError(
    inner.code,
    `branch "${name}" failed: ${where}${inner.message}`,
    { field: spec.field, branch: name },
    { cause: inner },
  );
}

/**
 * The stable path of branch `i` of the fan-out node executed as `seq` in `scope`, or undefined when
 * `scope` itself is not resumable node by node (then neither are its branches). Only events and a
 * resumed run's journal results read paths: in a run with neither (both are fixed for the whole
 * run), no branch gets one, so no string is built per branch.
 */
export function branchPath(scope: RunContext, seq: number, i: number): string | undefined {
  const p = scope.path;
  if (p === undefined) return undefined;
  const shared = scope.shared;
  if (shared.emit === undefined && shared.memo === undefined) return undefined;
  return `${p}/${seq}.${i}`;
}

/**
 * Load-time check of a node a fan-out or loop starts from (`field` is its JSON path below the node):
 * it must exist, and its next chain must not lead back to `self`, which would nest the node in itself.
 */
export function checkStartNode(cc: CompileContext, self: string, target: string, field: string): boolean {
  const names = cc.graph.names;
  if (!names.has(target)) {
    cc.problem(
      field,
      `no node named "${target}"${didYouMean(target, names)}; nodes: ${[...names].join(', ')}`,
    );
    return false;
  }
  if (target === self) {
    cc.problem(field, `"${self}" cannot start from itself; name the first node of the chain to run`);
    return false;
  }
  const path = cc.graph.pathBack(target, self);
  if (path) {
    cc.problem(
      field,
      `the chain from "${target}" leads back to "${self}" (${path.join(' -> ')}), which would run "${self}" inside itself; end the chain instead (no next, or next: "END")`,
    );
    return false;
  }
  return true;
}
