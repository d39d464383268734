/**
 * Checks of the run structure: nodes no run reaches, cycles a run can never leave (or leave only by
 * chance of a model's words), `node:` tools and `conversation` targets that name no usable node.
 */
import type { ValidationProblem } from '../../core/errors.js';
import { didYouMean, listNames, quote } from '../../schema/suggest.js';
import type { Flow } from './flow.js';
import { componentOrder } from './region.js';

/** Runs every graph check of `flow`, adding to `problems`. */
export function graphChecks(flow: Flow, problems: ValidationProblem[]): void {
  nodeTools(flow, problems);
  conversations(flow, problems);
  unreachable(flow, problems);
  cycles(flow, problems);
}

function nodeTools(flow: Flow, problems: ValidationProblem[]): void {
  const names = [...flow.index.keys()];
  flow.nodes.forEach((n, i) => {
    for (const r of flow.toolRefs[i]!) {
      if (flow.index.has(r.node)) continue;
      problems.push({
        path: `nodes/${n.index}/${r.field}`,
        message: `${quote(r.ref)}: this file has no node named ${quote(r.node)}${didYouMean(r.node, names)}; nodes: ${listNames(names)}`,
        fix: 'node:<name> runs the node of this file with that name',
      });
    }
  });
}

function conversations(flow: Flow, problems: ValidationProblem[]): void {
  const drones = flow.nodes.filter((n) => n.kind === 'drone').map((n) => n.name);
  for (const n of flow.nodes) {
    const target = n.def.conversation;
    if (n.kind !== 'drone' || typeof target !== 'string') continue;
    const t = flow.index.get(target);
    const path = `nodes/${n.index}/conversation`;
    if (t === undefined) {
      problems.push({
        path,
        message: `no node named ${quote(target)}${didYouMean(target, drones)}; drones: ${listNames(drones)}`,
        fix: 'conversation names the drone whose messages this one continues',
      });
    } else if (flow.nodes[t]!.kind !== 'drone') {
      problems.push({
        path,
        message: `${quote(target)} is a ${flow.nodes[t]!.kind} node, not a drone: only a drone has a conversation to continue; drones: ${listNames(drones)}`,
        fix: 'name a drone, or remove "conversation"',
      });
    }
  }
}

function unreachable(flow: Flow, problems: ValidationProblem[]): void {
  if (flow.start < 0) return;
  const seen = flow.reachable();
  const start = flow.nodes[flow.start]!.name;
  flow.nodes.forEach((n, i) => {
    if (seen[i]) return;
    problems.push({
      path: `nodes/${n.index}`,
      severity: 'warning',
      message: `node ${quote(n.name)} is unreachable: no run from the start node ${quote(start)} gets to it (nothing routes to it through next, on_limit, branches, a map's node, a loop's body or a node: tool)`,
      fix: `route to it from a node that runs, or remove it`,
    });
  });
}

/** Strongly connected components along chain edges, in the order Tarjan finds them (sinks first). */
function components(flow: Flow): number[][] {
  const order = componentOrder(flow.succ);
  const groups: number[][] = [];
  order.forEach((c, i) => {
    const group = groups[c];
    if (group) group.push(i);
    else groups[c] = [i];
  });
  return groups.reverse();
}

/**
 * A cycle (a strongly connected set of nodes along next/on_limit) is an error when a run that enters
 * it can never leave: no node in it ends runs or routes outside it, and no max_visits stops it. It is
 * a warning when its only ways out depend on what a node outputs (a next list, route "choose") and
 * no max_visits bounds it: if the words never come, only max_steps ends the run.
 */
function cycles(flow: Flow, problems: ValidationProblem[]): void {
  const seen = flow.reachable();
  for (const comp of components(flow)) {
    const first = comp[0]!;
    const isCycle = comp.length > 1 || flow.succ[first]!.includes(first);
    if (!isCycle || !comp.some((i) => seen[i])) continue;
    const inside = new Set(comp);
    let exit = false;
    let bounded = false;
    for (const i of comp) {
      if (flow.ends[i] || flow.succ[i]!.some((j) => !inside.has(j))) exit = true;
      if (flow.nodes[i]!.def.max_visits !== undefined) bounded = true;
    }
    if (bounded) continue;
    const order = [...comp].sort((a, b) => a - b);
    const names = order.map((i) => flow.nodes[i]!.name);
    const head = flow.nodes[order[0]!]!;
    const shown = listNames(names, 8);
    if (!exit) {
      problems.push({
        path: `nodes/${head.index}/next`,
        message: `the cycle ${shown} has no route out: no node in it routes to END or to a node outside it, and none has max_visits, so a run that gets there only stops at max_steps, as a failure`,
        fix: 'give one of its nodes a next list with a way out (e.g. ["Revise", "END"]), or max_visits with on_limit',
      });
    } else {
      problems.push({
        path: `nodes/${head.index}/next`,
        severity: 'warning',
        message: `the cycle ${shown} is left only when a node's output picks the way out (a next list, or route "choose"); if it never does, only max_steps stops the run, as a failure`,
        fix: 'add "max_visits" and "on_limit" to one of its nodes to bound the cycle',
      });
    }
  }
}
