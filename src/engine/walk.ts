import { throwIfAborted } from '../core/cancel.js';
import { formatError, HatcheryError, withContext } from '../core/errors.js';
import { addUsage } from '../providers/types.js';
import { kindSpec } from '../schema/nodes.js';
import type {
  CompiledNode,
  EventPlace,
  Hatchery,
  NodeResult,
  Router,
  RunContext,
  RunEvent,
  SpendDelta,
} from './contracts.js';

/** Picks the next node name of a list router from the node's output; undefined ends the run. */
function routeList(r: Extract<Router, { kind: 'list' }>, output: string): string | undefined {
  const { targets, tests } = r;
  for (let i = 0; i < tests.length; i++) {
    if (tests[i]!.test(output)) return targets[i] === 'END' ? undefined : targets[i];
  }
  return r.fallback === 'END' ? undefined : r.fallback;
}

/** The node named `name`, or NOT_FOUND. */
function nodeNamed(hatchery: Hatchery, name: string): CompiledNode {
  const node = hatchery.nodes.get(name);
  if (!node) {
    throw new HatcheryError('NOT_FOUND', `no node named "${name}"`, { file: hatchery.file, node: name });
  }
  return node;
}

/** Steps between two turns given to the event loop; a power of two, so the test is a mask. */
const YIELD_EVERY = 1024;

/** What a node execution spends, told to a durable engine's step under way (one object for every node). */
const ONE_STEP: SpendDelta = Object.freeze({ steps: 1 });

/** Resolves after the event loop has run timers and I/O (a macrotask, unlike a resolved promise). */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Counts a visit of `node`; returns the on_limit target when max_visits is exceeded. */
function visit(scope: RunContext, node: CompiledNode): string | undefined {
  const max = node.maxVisits;
  if (max === undefined) return undefined;
  const visits = scope.local.visits;
  const n = (visits.get(node.name) ?? 0) + 1;
  visits.set(node.name, n);
  if (n <= max) return undefined;
  if (node.onLimit !== undefined) return node.onLimit;
  throw new HatcheryError(
    'MAX_VISITS',
    `node ran more than max_visits (${max}) times in one run; raise max_visits or add "on_limit": "<node>" to leave the loop`,
    { file: scope.hatchery.file, node: node.name, field: 'max_visits' },
  );
}

/** The MAX_STEPS error of the node `name` about to run as one step too many. */
function maxStepsError(scope: RunContext, name: string): HatcheryError {
  const max = scope.shared.maxSteps;
  return new HatcheryError(
    'MAX_STEPS',
    `the run reached max_steps (${max}) node executions (spawned agents count too); a cycle may never end: check the next routes, or raise max_steps in the file or with --max-steps`,
    { file: scope.hatchery.file, node: name, field: 'max_steps' },
  );
}

/**
 * Runs nodes from `start` (a node of `scope.hatchery`, or its name) along their `next` routes until a
 * node has nowhere to go.
 * Returns the last node's result. Every await sits behind an abort check, and the step budget is
 * shared with nested runs through `scope.shared`.
 */
export async function walk(scope: RunContext, start: string | CompiledNode): Promise<NodeResult> {
  const { hatchery, shared } = scope;
  // A fan-out passes its branch's node (no lookup per branch); a name is looked up.
  let node: CompiledNode = typeof start === 'string' ? nodeNamed(hatchery, start) : start;
  let result: NodeResult = { text: '' };
  const durable = shared.durable;
  // The result of the node before this one in the walk: what a supervisor that ends it leaves.
  let before: NodeResult | undefined;
  for (;;) {
    if (node.maxVisits !== undefined) {
      const redirect = visit(scope, node);
      if (redirect !== undefined) node = nodeNamed(hatchery, redirect);
    }
    const name = node.name;
    // The error's context object is built only when there is an error.
    if (scope.signal.aborted) throwIfAborted(scope.signal, { file: hatchery.file, node: name });
    const step = ++shared.steps;
    if (step > shared.maxSteps) throw maxStepsError(scope, name);
    durable?.spent?.(ONE_STEP);
    // Instant nodes settle in microtasks only, which starve timers, I/O and cancellation; every
    // YIELD_EVERY steps the loop gets a turn (one allocation per 1024 steps, none in between). Tested
    // on the step this walk has claimed: on the shared count before claiming it, every branch of a
    // fan-out that came by while one waited saw the same count and waited too.
    if ((step & (YIELD_EVERY - 1)) === 0) {
      await yieldToLoop();
      if (scope.signal.aborted) throwIfAborted(scope.signal, { file: hatchery.file, node: name });
    }
    const emit = shared.emit;
    const t0 = emit ? performance.now() : 0;
    const seq = ++scope.seq;
    scope.step = step;
    // A resumed run takes a node that finished in an earlier attempt from the journal.
    const memo = shared.memo;
    const path = scope.path;
    let recorded = memo !== undefined && path !== undefined ? memo.take(path, seq, node) : undefined;
    // On a durable engine a leaf node (a script, a baneling) is one step: started inside it, so a
    // node the engine answers from its checkpoint is not reported as started again.
    const whole = durable !== undefined && recorded === undefined && kindSpec(node.kind)?.wholeStep === true;
    if (emit && recorded === undefined && !whole) nodeStarted(scope, node, step, t0, emit);
    if (recorded !== undefined) {
      result = recorded;
    } else {
      try {
        if (whole) {
          let ran = false;
          result = await durable.step(`node:${name}`, () => {
            ran = true;
            if (emit) nodeStarted(scope, node, step, t0, emit);
            return node.exec(scope);
          });
          // Answered from the checkpoint: taken as a resumed run takes a node from its journal.
          if (!ran) recorded = result;
        } else {
          result = await node.exec(scope);
        }
      } catch (err) {
        const error = withContext(err, { file: hatchery.file, node: name });
        if (emit) {
          const event: Extract<RunEvent, { type: 'node_error' }> = {
            type: 'node_error',
            runId: shared.runId,
            hatchery: hatchery.name,
            node: name,
            step,
            depth: scope.depth,
            error: formatError(error),
            code: error.code,
            ms: performance.now() - t0,
          };
          placeOf(scope, event);
          emit(event);
        }
        throw error;
      }
    }
    const text = result.text;
    const value = result.value;
    // A node that chose its successor itself (route: choose) overrides the text rule; null is END.
    const chose = result.next;
    // A fixed successor is the loader's link (no map lookup per step, and no read of the router, an
    // object more per step in a large file); a choice or a list goes by name.
    const successor = node.successor;
    const r = node.route;
    const next =
      chose !== undefined
        ? (chose ?? undefined)
        : successor !== undefined
          ? successor.name
          : r.kind === 'one'
            ? r.target
            : r.kind === 'end'
              ? undefined
              : routeList(r, text);
    // A branch's last output is read by nobody: its fan-out takes it from the result, and its out is
    // dropped. Written all the same when the node's write_output path (a template) may read it.
    if (next !== undefined || !scope.outUnread || node.writeOutput !== undefined)
      scope.setOut(name, value === undefined ? text : value);
    scope.last = text;
    if (node.saveOutput !== undefined) scope.save(node.saveOutput, value === undefined ? text : value);
    // A recorded node's file was written by the attempt that ran it.
    if (node.writeOutput !== undefined && recorded === undefined) await writeOutput(scope, node, text);
    const usage = result.usage;
    if (usage !== undefined && recorded === undefined) addUsage(shared.usage, usage);
    if (emit) {
      const t1 = performance.now();
      const event: Extract<RunEvent, { type: 'node_end' }> = {
        type: 'node_end',
        runId: shared.runId,
        hatchery: hatchery.name,
        node: name,
        step,
        depth: scope.depth,
        output: text,
        usage,
        ms: t1 - t0,
        seq,
        next: next ?? null,
        // In the literal (undefined where executions are not resumable one by one): added after, it
        // would give every event a second allocation for its properties.
        path,
        ts: t1,
      };
      if (value !== undefined) event.value = value;
      if (chose !== undefined) event.chose = chose;
      if (recorded !== undefined) event.replayed = true;
      placeOf(scope, event);
      emit(event);
    }
    if (next === undefined) {
      // A supervisor (route: choose) that chose END decided the run is done: its routing text is not
      // the work, the output of the node before it is.
      if (chose === null && before !== undefined) return { text: before.text, value: before.value };
      return result;
    }
    before = result;
    node = chose === undefined && successor !== undefined ? successor : nodeNamed(hatchery, next);
  }
}

/** Emits the node_start event of `node` as step `step` of `scope`. */
function nodeStarted(
  scope: RunContext,
  node: CompiledNode,
  step: number,
  ts: number,
  emit: (event: RunEvent) => void,
): void {
  const event: Extract<RunEvent, { type: 'node_start' }> = {
    type: 'node_start',
    runId: scope.shared.runId,
    hatchery: scope.hatchery.name,
    node: node.name,
    kind: node.kind,
    step,
    depth: scope.depth,
    ts,
  };
  placeOf(scope, event);
  emit(event);
}

/**
 * Appends a node's output and a newline to its write_output file, creating folders. The path is
 * relative to the hatchery's folder and must pass the write policy (write roots, protected folders,
 * never a hatchery file, never through a symlink).
 */
async function writeOutput(scope: RunContext, node: CompiledNode, text: string): Promise<void> {
  const where = { file: scope.hatchery.file, node: node.name, field: 'write_output' };
  const rel = scope.render(node.writeOutput!);
  try {
    await scope.guard.writeText(scope.hatchery.dir, rel, `${text}\n`, where, { append: true });
  } catch (err) {
    if (err instanceof HatcheryError) throw err;
    throw new HatcheryError('FILE_IO', `cannot write "${rel}": ${(err as Error).message}`, where, {
      cause: err,
    });
  }
}

/** Sets an event's place in the run tree (see EventPlace) from the scope it happens in. */
export function placeOf(scope: RunContext, event: EventPlace): void {
  // A loop's body sits under the loop, which itself sits where its scope does.
  const bodyOf = scope.bodyOf;
  if (bodyOf !== undefined) {
    event.parent = bodyOf;
    return;
  }
  if (scope.parentStep !== undefined) event.parent = scope.parentStep;
  if (scope.parentCall !== undefined) event.call = scope.parentCall;
  if (scope.item !== undefined) event.item = scope.item;
}
