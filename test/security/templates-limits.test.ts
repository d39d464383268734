/**
 * Templates cannot fill memory: a 900-byte template that doubles a string 24 times (with `~` or a
 * filter), a loop that prints a text 100,000 times and fread of a large file each end with a
 * TEMPLATE error naming --max-render-chars, in a CLI whose heap is 256 MB; within the limit they work.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

const SMALL_HEAP = { NODE_OPTIONS: '--max-old-space-size=256' };
const SEED = 'x'.repeat(850);

function scriptFile(dir: string, name: string, stdin: string): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      name,
      desc: 'renders',
      nodes: [{ name: 'A', type: 'script', cmd: ['wc', '-c'], stdin }],
    }),
  );
  return file;
}

describe('the template text limit', () => {
  it('ends doubling, printing in a loop and a large fread with a TEMPLATE error, not an out-of-memory abort', async () => {
    const dir = tempDir('tmpl-limits-');
    writeFileSync(path.join(dir, 'big.txt'), 'y'.repeat(9 * 1024 * 1024));
    const cases = [
      [
        `{% set s = '${SEED}' %}{% for i in range(24) %}{% set s = s ~ s %}{% endfor %}{{ s }}`,
        'a text joined with ~',
      ],
      [
        `{% set s = '${SEED}' %}{% for i in range(24) %}{% set s = s | replace('x', 'xx') %}{% endfor %}{{ s }}`,
        'the result of filter "replace"',
      ],
      [`{% for i in range(100000) %}{{ '${SEED}' }}{% endfor %}`, 'the rendered text'],
      ["{{ fread('big.txt') }}", 'fread("big.txt")'],
    ] as const;
    for (const [i, [template, what]] of cases.entries()) {
      expect(Buffer.byteLength(template)).toBeLessThan(1000);
      const r = await runCli(['run', scriptFile(dir, `t${i}`, template), '--input', 'x'], {
        env: SMALL_HEAP,
        cwd: dir,
      });
      expect(r.code, `${template.slice(-60)}: ${r.stderr.slice(0, 500)}`).toBe(1);
      expect(r.stderr).toContain(what);
      expect(r.stderr).toContain('--max-render-chars');
      expect(r.stderr).not.toMatch(/heap out of memory|Node\.js v\d/);
    }
  }, 120_000);

  it('lets text within the limit through, and --max-render-chars raises it', async () => {
    const dir = tempDir('tmpl-limits-');
    writeFileSync(path.join(dir, 'big.txt'), 'y'.repeat(9 * 1024 * 1024));
    const doubled = scriptFile(
      dir,
      'ok',
      `{% set s = 'ab' %}{% for i in range(10) %}{% set s = s ~ s %}{% endfor %}{{ s }}`,
    );
    const small = await runCli(['run', doubled, '--input', 'x'], { cwd: dir });
    expect(small.code, small.stderr).toBe(0);
    expect(small.stdout.trim()).toBe(String(2 * 1024));
    const read = scriptFile(dir, 'read', "{{ fread('big.txt') }}");
    const raised = await runCli(
      ['run', read, '--input', 'x', '--max-render-chars', String(16 * 1024 * 1024)],
      { cwd: dir },
    );
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout.trim()).toBe(String(9 * 1024 * 1024));
  }, 60_000);
});
