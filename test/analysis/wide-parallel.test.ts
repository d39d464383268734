/**
 * A parallel of thousands of branches is analysed in time linear in its width: each branch reads its
 * siblings' saves from one set kept per parallel (issue 15; it walked every sibling, 35 s to load
 * 8,000 branches). The timing is bench/load-scale.ts; this checks the findings stay the same.
 */
import { describe, expect, it } from 'vitest';
import { echo, hatch } from '../helpers.js';
import { report } from './helpers.js';

const WIDTH = 6_000;

/** A parallel of `WIDTH` echo branches; the first saves ctx.a, the last reads it, `After` reads both. */
function wide(): Record<string, unknown> {
  const names = Array.from({ length: WIDTH }, (_, i) => `B${i}`);
  const last = WIDTH - 1;
  return hatch(
    [
      { name: 'P', type: 'parallel', branches: names, next: 'After' },
      ...names.map((n, i) =>
        i === 0 ? echo(n, 'a', { save_output: 'a' }) : echo(n, i === last ? '{{ ctx.a }}' : n),
      ),
      echo('After', `{{ ctx.a }} {{ out.B${last} }}`),
    ],
    { max_steps: WIDTH + 2 },
  );
}

describe(`a parallel of ${WIDTH} branches`, () => {
  it('loads, and a branch reading a sibling save is told it may be unset; after the join it is set', () => {
    const problems = report(wide());
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`nodes/${WIDTH}/tool_args/text: warning: ctx.a`);
    expect(problems[0]).toContain(`may be undefined when "B${WIDTH - 1}" runs`);
    expect(problems[0]).toContain('(saved by "B0")');
  }, 60_000);
});
