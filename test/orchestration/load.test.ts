import { describe, expect, it } from 'vitest';
import { hatch, load, problems } from '../helpers.js';
import { echo } from './helpers.js';

describe('load-time checks of parallel, map and loop', () => {
  it('accepts the three kinds', () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'], join: '{{ branches | length }}', next: 'M' },
        { name: 'M', type: 'map', items: '{{ out.P }}', node: 'A', concurrency: 2, next: 'L' },
        { name: 'L', type: 'loop', body: 'B', until: 'DONE', max_iterations: 3, on_limit: 'A' },
        echo('A', 'a'),
        echo('B', 'b'),
      ]),
    );
    expect([...h.nodes.values()].map((n) => n.kind)).toEqual([
      'parallel',
      'map',
      'loop',
      'baneling',
      'baneling',
    ]);
  });

  it('names unknown branches, body and node targets with their JSON paths', () => {
    expect(
      problems(
        hatch([{ name: 'P', type: 'parallel', branches: ['A', 'Bee'] }, echo('A', 'a'), echo('B', 'b')]),
      ),
    ).toEqual([
      'nodes/0/branches/1: no node named "Bee" (did you mean "B"?); nodes: P, A, B',
      // The same typo leaves B unreached; a failed file lists its warnings too.
      'nodes/2: warning: node "B" is unreachable: no run from the start node "P" gets to it (nothing routes to it through next, on_limit, branches, a map\'s node, a loop\'s body or a node: tool)',
    ]);
    expect(problems(hatch([{ name: 'L', type: 'loop', body: 'Nope', until: 'x' }]))[0]).toMatch(
      /^nodes\/0\/body: no node named "Nope"/,
    );
    expect(problems(hatch([echo('A', 'a'), { name: 'M', type: 'map', items: 'x', node: 'Z' }]))[0]).toMatch(
      /^nodes\/1\/node: no node named "Z"/,
    );
  });

  it('requires the fields of each kind', () => {
    expect(problems(hatch([{ name: 'L', type: 'loop', until: 'x' }]))).toEqual([
      'nodes/0/body: missing required key "body" (node that starts the body); add it (a string)',
    ]);
    expect(problems(hatch([{ name: 'P', type: 'parallel', branches: [] }]))[0]).toMatch(
      /^nodes\/0\/branches: /,
    );
    expect(
      problems(hatch([echo('A', 'a'), { type: 'map', node: 'A', concurrency: 0 }])).map(
        (p) => p.split(':')[0],
      ),
    ).toEqual(['nodes/1/items', 'nodes/1/concurrency']);
  });

  it('reports template syntax errors in join, items and until', () => {
    const p = problems(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A'], join: '{% for b in branches %}', next: 'M' },
        { name: 'M', type: 'map', items: '{{ ctx.x ', node: 'A', next: 'L' },
        { name: 'L', type: 'loop', body: 'A', until: '{{ ctx.done }' },
        echo('A', 'a'),
      ]),
    );
    expect(p.map((x) => x.split(':')[0])).toEqual(['nodes/0/join', 'nodes/1/items', 'nodes/2/until']);
    for (const x of p) expect(x).toContain('template syntax error');
  });

  it('refuses chains that lead back into the node that starts them', () => {
    expect(
      problems(hatch([{ name: 'P', type: 'parallel', branches: ['A'] }, echo('A', 'a', { next: 'P' })])),
    ).toEqual([
      'nodes/0/branches/0: the chain from "A" leads back to "P" (A -> P), which would run "P" inside itself; end the chain instead (no next, or next: "END")',
    ]);
    expect(problems(hatch([{ name: 'L', type: 'loop', body: 'L', until: 'x' }]))[0]).toMatch(
      /^nodes\/0\/body: "L" cannot start from itself/,
    );
    expect(
      problems(
        hatch([
          { name: 'L', type: 'loop', body: 'A', until: 'x', next: 'A' },
          echo('A', 'a', { next: ['B', 'END'] }),
          echo('B', 'b', { next: 'L' }),
        ]),
      )[0],
    ).toMatch(/^nodes\/0\/body: the chain from "A" leads back to "L" \(A -> B -> L\)/);
  });

  it('refuses a branch listed twice', () => {
    expect(problems(hatch([{ name: 'P', type: 'parallel', branches: ['A', 'A'] }, echo('A', 'a')]))).toEqual([
      'nodes/0/branches/1: "A" is listed twice; each branch needs its own out.A',
    ]);
  });

  it('lets loop nodes use on_limit without max_visits, but not other kinds', () => {
    expect(
      problems(hatch([{ name: 'L', type: 'loop', body: 'A', until: 'x', on_limit: 'A' }, echo('A', 'a')])),
    ).toEqual([]);
    expect(
      problems(hatch([{ name: 'P', type: 'parallel', branches: ['A'], on_limit: 'A' }, echo('A', 'a')])),
    ).toEqual(['nodes/0/on_limit: on_limit needs max_visits on the same node']);
  });

  it('suggests the nearest key and type for typos', () => {
    expect(
      problems(hatch([{ name: 'P', type: 'parallel', branch: ['A'], branches: ['A'] }, echo('A', 'a')])),
    ).toEqual(['nodes/0/branch: unknown key "branch" (did you mean "branches"?)']);
    expect(problems(hatch([{ name: 'P', type: 'paralel', branches: ['A'] }]))[0]).toContain(
      'did you mean "parallel"?',
    );
  });
});
