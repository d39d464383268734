/**
 * The examples in hatchery/ ship with test files and cassettes (hatchery/tests/): `npm test` runs them
 * through the built CLI as CI would, with no API key in the environment and base URLs where nothing
 * listens, so a call that left the cassette would fail.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli } from '../helpers.js';

const { openai, anthropic } = fakeVendors();
beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

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

  it('passes the same with HATCHERY_MODEL, both keys and both base URLs set in the shell', async () => {
    // A user's shell: another model chosen and live keys, the vendors reachable (the fakes count
    // what reaches them). A test run is hermetic: the recording chooses the model, and nothing is sent.
    const r = await runCli(['test', 'hatchery'], {
      env: {
        HATCHERY_MODEL: 'openai:gpt-4o',
        OPENAI_API_KEY: 'sk-shell-openai-123456',
        ANTHROPIC_API_KEY: 'sk-ant-shell-123456',
        OPENAI_BASE_URL: openai.baseURL,
        ANTHROPIC_BASE_URL: anthropic.baseURL,
      },
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(r.stdout).not.toContain('✗');
    expect(openai.requests).toHaveLength(0);
    expect(anthropic.requests).toHaveLength(0);
  });

  it("passes with only one vendor's key set, whichever it is", async () => {
    for (const key of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) {
      const r = await runCli(['test', 'hatchery'], {
        env: {
          [key]: 'sk-only-this-vendor-123456',
          OPENAI_BASE_URL: openai.baseURL,
          ANTHROPIC_BASE_URL: anthropic.baseURL,
        },
      });
      expect({ key, code: r.code, failed: r.stdout.includes('✗') }).toEqual({ key, code: 0, failed: false });
    }
    expect(openai.requests).toHaveLength(0);
    expect(anthropic.requests).toHaveLength(0);
  });
});
