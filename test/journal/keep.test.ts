/** --keep-runs and --keep-days: the state folder is pruned as the CLI opens it, and bad values are usage errors. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { echo, hatch, runCli, tempDir } from '../helpers.js';
import { writeHatchery } from '../mcp/helpers.js';

function journals(state: string): string[] {
  return readdirSync(state).filter((f) => f.endsWith('.jsonl'));
}

describe('pruning the state folder from the command line', () => {
  it('--keep-runs N keeps the newest N finished runs (plus the one starting)', async () => {
    const dir = tempDir('hatchery-keep-');
    const file = writeHatchery(dir, 'echo.json', hatch([echo('Say', 'said {{ ctx.input }}')]));
    const state = path.join(dir, 'state');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await runCli(['run', file, '--input', `n${i}`, '--state', state, '--keep-runs', '2', '-q']);
      expect(r.code, r.stderr).toBe(0);
      const added = journals(state).filter((f) => !ids.includes(f));
      expect(added).toHaveLength(1);
      ids.push(added[0]!);
    }
    // The fourth process pruned to the newest two, then added its own.
    expect(journals(state).sort()).toEqual([ids[1], ids[2], ids[3]].sort());
  });

  it('refuses values that are not positive whole numbers, and with --no-journal', async () => {
    const dir = tempDir('hatchery-keep-');
    const file = writeHatchery(dir, 'echo.json', hatch([echo('Say', 'x')]));
    for (const args of [
      ['--keep-runs', '0'],
      ['--keep-days', '-3'],
      ['--keep-days', 'soon'],
      ['--keep-runs', '5', '--no-journal'],
    ]) {
      const r = await runCli(['run', file, '--input', 'x', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/--keep-(runs|days)/);
    }
  });
});
