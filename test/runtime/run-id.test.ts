/**
 * Run ids name run files and are what clients pass to hatchery_result and `runs` commands: each is a
 * fresh random version 4 UUID, as crypto.randomUUID gives, also past the refill of its random pool.
 */
import { describe, expect, it } from 'vitest';
import { isRunId } from '../../src/journal/run-files.js';
import { newRunId } from '../../src/runtime/run-id.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('run ids', () => {
  it('are version 4 UUIDs, all different, over several refills of the random pool', () => {
    const ids = Array.from({ length: 5000 }, () => newRunId());
    for (const id of ids) {
      expect(id).toMatch(V4);
      expect(isRunId(id)).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('use every hex digit in every random position', () => {
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 4000; i++) {
      const id = newRunId();
      for (let c = 0; c < 36; c++) seen[c]!.add(id[c]!);
    }
    const sizes = seen.map((s) => s.size);
    // Dashes, the version digit and the variant digit (4 values) are fixed; every other position is random.
    const fixed = new Set([8, 13, 14, 18, 19, 23]);
    sizes.forEach((n, c) => {
      if (c === 14 || [8, 13, 18, 23].includes(c)) expect(n, `position ${c}`).toBe(1);
      else if (c === 19) expect(n).toBe(4);
      else if (!fixed.has(c)) expect(n, `position ${c}`).toBe(16);
    });
  });
});
