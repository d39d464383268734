/**
 * A journal keeps its file open while its run goes on (one append per flush, no open and close each
 * time), up to a cap: beyond it, journals open and close their file per flush. With more runs in flight
 * than the cap, every journal is still complete, and no descriptor is left open after the runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openFilesCap, setOpenFilesCap } from '../../src/journal/journal-file.js';
import { tempDir } from '../helpers.js';
import { journaledChain } from './run-record.js';

const openFds = () => readdirSync('/proc/self/fd').length;

describe.runIf(process.platform === 'linux')('journal files kept open', () => {
  it('keeps up to a quarter of the descriptor limit open, between 256 and 4,096', () => {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const limit = Number(m?.[1] ?? 1024);
    expect(openFilesCap()).toBe(Math.max(256, Math.min(4096, Math.floor(limit / 4))));
  });

  it('300 runs at once (over a cap of 256) are all journaled whole, and every file is closed after', async () => {
    setOpenFilesCap(256);
    onTestFinished(() => setOpenFilesCap(undefined));
    const dir = tempDir('hatchery-journal-fds-');
    const { store, runtime, h } = journaledChain(dir, 50);
    const before = openFds();
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => runtime.run(h, { input: `n${i}` })),
    );
    await store.idle();
    expect(results.every((r) => r.output === 'done')).toBe(true);
    const runs = await store.list({ limit: 1000 });
    expect(runs).toHaveLength(300);
    for (const s of runs) expect(s).toMatchObject({ status: 'succeeded', steps: 2 });
    // Each journal holds both nodes' ends, in order, after its start.
    const one = await store.read(runs[123]!.id);
    expect(one?.records.filter((r) => r.type === 'node_end').map((r) => r.node)).toEqual(['A', 'B']);
    expect(openFds()).toBeLessThanOrEqual(before + 2);
    await runtime.close();
    await store.close();
  });
});
