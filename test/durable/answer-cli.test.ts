/**
 * A run that asks, started where nobody can answer (no terminal), suspends with exit 4 and the
 * command that answers it; `runs resume ID --answer` finishes it from the journal, and a wrong
 * answer leaves it waiting instead of losing it.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { runCli, tempDir } from '../helpers.js';
import { writeHatchery } from '../mcp/helpers.js';

function setup(): { file: string; env: Record<string, string> } {
  const dir = tempDir('hatchery-answer-');
  const file = writeHatchery(dir, 'pick.json', pick);
  return { file, env: { HATCHERY_STATE: path.join(dir, 'state') } };
}

async function suspend(file: string, env: Record<string, string>): Promise<string> {
  const r = await runCli(['run', file, '--input', 'the shed'], { env });
  expect(r.code).toBe(4);
  expect(r.stderr).toContain('Which colour for the shed?');
  const id = /runs resume ([0-9a-f-]{36}) --answer TEXT/.exec(r.stderr)?.[1];
  expect(id, r.stderr).toBeDefined();
  return id!;
}

describe('runs resume --answer', () => {
  it('answers a suspended run from the shell; the run ends with the answer', async () => {
    const { file, env } = setup();
    const id = await suspend(file, env);
    const listed = await runCli(['runs', 'list', '--json'], { env });
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ id, status: 'input_required' });

    const r = await runCli(['runs', 'resume', id, '--answer', 'Blue'], { env });
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('painted blue');
    const shown = await runCli(['runs', 'show', id, '--json'], { env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'succeeded' });
  });

  it('a wrong answer is refused and the run still waits for a right one', async () => {
    const { file, env } = setup();
    const id = await suspend(file, env);
    const wrong = await runCli(['runs', 'resume', id, '--answer', 'purple'], { env });
    // Still waiting (exit 4), and the question now says why the answer was refused.
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('purple');
    expect(wrong.stderr).toContain('Which colour for the shed?');
    expect(wrong.stderr).toContain(`runs resume ${id} --answer TEXT`);
    const right = await runCli(['runs', 'resume', id, '--answer', 'red'], { env });
    expect(right.code).toBe(0);
    expect(right.stdout.trim()).toBe('painted red');
  });
});
