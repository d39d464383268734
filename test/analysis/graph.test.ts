import { describe, expect, it } from 'vitest';
import { echo, hatch } from '../helpers.js';
import { loaded, report } from './helpers.js';

describe('graph checks', () => {
  it('a cycle with no route out is an error', () => {
    expect(
      report(
        hatch([
          echo('Start', 's', { next: 'A' }),
          echo('A', 'a', { next: 'B' }),
          echo('B', 'b', { next: 'A' }),
        ]),
      ),
    ).toEqual([
      'h.json: nodes/1/next: the cycle A, B has no route out: no node in it routes to END or to a node outside it, and none has max_visits, so a run that gets there only stops at max_steps, as a failure; give one of its nodes a next list with a way out (e.g. ["Revise", "END"]), or max_visits with on_limit',
    ]);
    expect(report(hatch([echo('A', 'a', { next: 'A' })]))[0]).toMatch(
      /^h\.json: nodes\/0\/next: the cycle A has no route out/,
    );
  });

  it('a cycle whose only way out is an output word is a warning; max_visits with on_limit bounds it', () => {
    expect(report(hatch([echo('A', 'a', { next: 'B' }), echo('B', 'b', { next: ['END', 'A'] })]))).toEqual([
      'h.json: nodes/0/next: warning: the cycle A, B is left only when a node\'s output picks the way out (a next list, or route "choose"); if it never does, only max_steps stops the run, as a failure; add "max_visits" and "on_limit" to one of its nodes to bound the cycle',
    ]);
    const bounded = hatch([
      echo('A', 'a', { next: 'B', max_visits: 3, on_limit: 'Done' }),
      echo('B', 'b', { next: ['END', 'A'] }),
      echo('Done', 'd'),
    ]);
    expect(loaded(bounded).warnings).toEqual([]);
    // A loop node's on_limit, or an END entry, is a route out too.
    expect(loaded(hatch([echo('A', 'a', { next: ['A', 'END'], max_visits: 2 })])).warnings).toEqual([]);
  });

  it('unreachable nodes are a warning; branches, map nodes, loop bodies, on_limit and node: tools reach', () => {
    expect(report(hatch([echo('A', 'a'), echo('Orphan', 'b')]))).toEqual([
      'h.json: nodes/1: warning: node "Orphan" is unreachable: no run from the start node "A" gets to it (nothing routes to it through next, on_limit, branches, a map\'s node, a loop\'s body or a node: tool); route to it from a node that runs, or remove it',
    ]);
    const h = loaded(
      hatch([
        { name: 'P', type: 'parallel', branches: ['B1'], next: 'M' },
        echo('B1', 'b'),
        { name: 'M', type: 'map', items: '["x"]', node: 'Each', next: 'L' },
        echo('Each', 'e'),
        { name: 'L', type: 'loop', body: 'Body', until: 'e', next: 'D', max_iterations: 2 },
        echo('Body', 'e'),
        { name: 'D', usr_prompt: 'x', tools: ['node:Tool'], next: 'T', max_visits: 1, on_limit: 'Limit' },
        { name: 'T', type: 'tool', tool_name: 'node:Tool2', tool_args: { input: 'x' } },
        echo('Tool', 't'),
        echo('Tool2', 't'),
        echo('Limit', 'l'),
      ]),
    );
    expect(h.warnings).toEqual([]);
  });

  it('node: tools naming a missing node are an error with did-you-mean, in drones, spawn and banelings', () => {
    expect(
      report(
        hatch([
          {
            name: 'Ask',
            usr_prompt: 'x',
            tools: ['node:Serch'],
            spawn: { templates: [{ name: 'r', desc: 'd', tools: ['node:Nope'] }] },
            next: 'T',
          },
          { name: 'T', type: 'tool', tool_name: 'node:search', tool_args: { input: 'x' } },
          echo('Search', 's'),
        ]),
      ).filter((l) => !l.includes('warning')),
    ).toEqual([
      'h.json: nodes/0/tools/0: "node:Serch": this file has no node named "Serch" (did you mean "Search"?); nodes: Ask, T, Search; node:<name> runs the node of this file with that name',
      'h.json: nodes/0/spawn/templates/0/tools/0: "node:Nope": this file has no node named "Nope"; nodes: Ask, T, Search; node:<name> runs the node of this file with that name',
      'h.json: nodes/1/tool_name: "node:search": this file has no node named "search" (did you mean "Search"?); nodes: Ask, T, Search; node:<name> runs the node of this file with that name',
    ]);
  });

  it('a conversation target that does not run before is a warning', () => {
    expect(
      report(
        hatch([
          { name: 'Later', conversation: 'First', usr_prompt: 'x', next: 'First' },
          { name: 'First', usr_prompt: 'y' },
        ]),
      ),
    ).toEqual([
      'h.json: nodes/0/conversation: warning: "Later" continues the conversation of "First", which never runs before it: the run fails there with "no history yet"; route "First" before "Later"',
    ]);
    expect(
      loaded(
        hatch([
          { name: 'First', usr_prompt: 'y', next: 'Later' },
          { name: 'Later', conversation: 'First', usr_prompt: 'x' },
        ]),
      ).warnings,
    ).toEqual([]);
  });

  it('a conversation target that is missing or not a drone is an error', () => {
    expect(
      report(hatch([echo('A', 'a', { next: 'B' }), { name: 'B', usr_prompt: 'x', conversation: 'A' }])),
    ).toEqual([
      'h.json: nodes/1/conversation: "A" is a baneling node, not a drone: only a drone has a conversation to continue; drones: B; name a drone, or remove "conversation"',
    ]);
    expect(
      report(
        hatch([
          { name: 'Writer', usr_prompt: 'a', next: 'B' },
          { name: 'B', usr_prompt: 'x', conversation: 'Writr' },
        ]),
      ),
    ).toEqual([
      'h.json: nodes/1/conversation: no node named "Writr" (did you mean "Writer"?); drones: Writer, B; conversation names the drone whose messages this one continues',
    ]);
  });
});
