import { it } from 'vitest';
import { echo, hatch } from '../helpers.js';
import { report } from '../analysis/helpers.js';
it('x', () => {
  const h = hatch([echo('A', '{{ ctx.summary }}', { next: 'B' }), echo('B', 'b', { save_output: 'summary' })]);
  console.log(JSON.stringify(h));
  console.log(report(h));
});
