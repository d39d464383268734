/**
 * A journal that cannot be written (here: a file-size limit of 0, which fails every write to a file
 * with EFBIG as a full disk fails with ENOSPC, without root) is reported on stderr once, naming the
 * folder and the errno; the run still answers and its result says its journal is incomplete; and
 * `runs list` never shows it running.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, runCli, tempDir } from '../helpers.js';

/** Runs the built CLI under `ulimit -f 0` (SIGXFSZ ignored, so a write fails instead of killing it). */
function runLimited(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'sh',
      ['-c', `trap '' XFSZ; ulimit -f 0; exec "$0" "$@"`, process.execPath, CLI_PATH, ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => {
      stdout += b;
    });
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a journal that cannot be written', () => {
  it('is reported once with the folder and errno, the result says so, and no run reads as running', async () => {
    const dir = tempDir('journal-full-');
    const state = path.join(dir, 'state');
    const file = path.join(dir, 'chain.json');
    const nodes = [0, 1, 2, 3, 4].map((i) => ({
      name: `S${i}`,
      type: 'script',
      cmd: ['echo', `step ${i}`],
      ...(i < 4 ? { next: `S${i + 1}` } : {}),
    }));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, JSON.stringify({ name: 'chain', desc: 'five steps', nodes }));
    for (let i = 0; i < 2; i++) {
      const r = await runLimited(['run', file, '--input', 'x', '--json'], { HATCHERY_STATE: state });
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as { output: string; journal?: string };
      expect(result.output.trim()).toBe('step 4');
      expect(result.journal).toBe('incomplete');
      const reports = r.stderr.split('\n').filter((l) => l.includes('writing the run journal'));
      expect(reports, r.stderr).toHaveLength(1);
      expect(reports[0]).toContain(state);
      expect(reports[0]).toMatch(/\(EFBIG: /);
    }
    const list = await runCli(['runs', 'list', '--json'], { env: { HATCHERY_STATE: state } });
    expect(list.code, list.stderr).toBe(0);
    for (const run of JSON.parse(list.stdout) as { status: string }[]) expect(run.status).not.toBe('running');
  });
});
