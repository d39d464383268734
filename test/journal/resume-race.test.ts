/**
 * Two processes resuming one run at the same moment (two servers on one state folder, or a
 * `runs resume` racing `hatchery_resume`) must not both run it: reopening is atomic.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

describe('resuming one run twice at once', () => {
  it('lets exactly one reopen win; the other is refused with RESUME_REFUSED', async () => {
    const dir = tempDir('hatchery-race-');
    const state = path.join(dir, 'runs');
    const runtime = new Runtime({
      providers: { openai: new ScriptedProvider([new Error('the model is down')]) },
      env: {},
      store: new FileRunStore(state, { env: {} }),
      cwd: dir,
    });
    const h = load(hatch([{ name: 'A', model: 'openai:gpt-test', usr_prompt: 'hi' }], { name: 'one' }), dir);
    const failed = await runtime.run(h, { input: 'x' }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(HatcheryError);
    const id = String((failed as HatcheryError).context.runId);
    await runtime.close();

    // Two stores on one folder stand for two processes.
    for (let round = 0; round < 5; round++) {
      const a = new FileRunStore(state, { env: {} });
      const b = new FileRunStore(state, { env: {} });
      const results = await Promise.allSettled([a.reopen(id), b.reopen(id)]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect((lost[0]!.reason as HatcheryError).code).toBe('RESUME_REFUSED');
      // The winner's attempt ends; the run can be resumed again in the next round.
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<FileRunStore['reopen']>>>).value.end(
        'failed',
        {},
      );
      await Promise.all([a.close(), b.close()]);
    }
    const final = await new FileRunStore(state, { env: {} }).read(id);
    expect(final?.summary.attempts).toBe(6);
  });
});
