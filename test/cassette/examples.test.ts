/**
 * The examples in hatchery/ ship with test files and cassettes (hatchery/tests/): `npm test` runs them
 * through the built CLI as CI would, with no API key in the environment and base URLs where nothing
 * listens, so a call that left the cassette would fail.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';

describe('hatchery-mcp test hatchery', () => {
  it('passes every case of every example, without network or key', async () => {
    const r = await runCli(['test', 'hatchery'], {
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' },
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = r.stdout.trimEnd().split('\n');
    const last = /^(\d+) passed, 0 failed$/.exec(lines.at(-1) ?? '');
    expect(last, r.stdout).not.toBeNull();
    expect(Number(last![1])).toBeGreaterThanOrEqual(11);
    expect(lines.filter((l) => l.startsWith('  ✓ '))).toHaveLength(Number(last![1]));
    expect(r.stdout).not.toContain('✗');
    for (const example of [
      'hello',
      'triage-router',
      'research-team',
      'outline-expand',
      'parallel-review',
      'design-qa',
    ]) {
      expect(r.stdout).toContain(`hatchery/tests/${example}.test.yaml\n`);
    }
  });
});
