import type { ChildOptions, CompiledNode, NodeKindImpl, NodeResult } from '../engine/contracts.js';
import { walk } from '../engine/walk.js';
import type { ParallelDef } from '../schema/parallel.js';
import { branchPath, checkStartNode, fanOut } from './fanout.js';

/**
 * The default join: each branch's output under a `## <branch>` heading, separated by blank lines.
 * Built with one join, not `+=`: the tree of concatenations (several strings a branch) was a large
 * part of what young collections found alive and copied (1.18 against 0.70 MB per scavenge in a loop
 * of 100-branch runs).
 */
function defaultJoin(names: readonly string[], results: readonly NodeResult[]): string {
  const parts = new Array<string>(names.length);
  for (let i = 0; i < names.length; i++) parts[i] = `## ${names[i]}\n${results[i]!.text}`;
  return parts.join('\n\n');
}

/**
 * Parallel: runs each branch (a node and its next chain) concurrently in a child scope, copies each
 * branch's final output to out.<branch>, and joins the outputs.
 */
export const parallelImpl: NodeKindImpl<ParallelDef> = {
  compile(def, base, cc) {
    const names = def.branches;
    const seen = new Set<string>();
    names.forEach((b, i) => {
      if (seen.has(b))
        cc.problem(`branches/${i}`, `"${b}" is listed twice; each branch needs its own out.${b}`);
      seen.add(b);
      checkStartNode(cc, base.name, b, `branches/${i}`);
    });
    const join = def.join === undefined ? undefined : cc.template(def.join, 'join');
    const continueOnError = def.on_error === 'continue';
    // The branches' first nodes, found on the first execution: a loaded hatchery never changes.
    let starts: (CompiledNode | undefined)[] | undefined;
    return {
      ...base,
      exec: async (scope) => {
        const seq = scope.seq;
        const nodes = scope.hatchery.nodes;
        starts ??= names.map((name) => nodes.get(name));
        const first = starts;
        // One options object for every branch: child() copies what it reads.
        const opts: ChildOptions = { signal: undefined, path: undefined, outUnread: true };
        const branchScope = (i: number, signal: AbortSignal) => {
          opts.signal = signal;
          opts.path = branchPath(scope, seq, i);
          return scope.child(undefined, opts);
        };
        const results = await fanOut(scope, {
          count: names.length,
          concurrency: names.length,
          continueOnError,
          field: 'branches',
          name: (i) => names[i]!,
          start: (i) => names[i]!,
          run: (i, signal) => walk(branchScope(i, signal), first[i] ?? names[i]!),
        });
        for (let i = 0; i < names.length; i++) {
          const r = results[i]!;
          scope.setOut(names[i]!, r.value === undefined ? r.text : r.value);
        }
        if (!join) return { text: defaultJoin(names, results) };
        const branches = names.map((name, i) => ({ name, output: results[i]!.text }));
        return { text: join.render({ ...scope.vars, branches }) };
      },
    };
  },
};
