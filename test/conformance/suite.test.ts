/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against the built
 * server over HTTP, through scripts/conformance.mjs: every scenario that applies passes. The script
 * fetches the suite and a Node 22 from the npm registry on its first run (then from npm's cache); a
 * machine that cannot reach the registry skips this test and says why.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers.js';

const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/conformance.mjs')], {
  cwd: REPO_ROOT,
  encoding: 'utf8',
  timeout: 240_000,
});
const output = `${run.stdout}${run.stderr}`;
const offline = run.status !== 0 && /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network/i.test(output);
if (offline) console.warn(`conformance: skipped, the npm registry cannot be reached:\n${output.slice(-600)}`);

describe.skipIf(offline)('MCP conformance suite', () => {
  it('passes every scenario that applies to this server, and lists the rest with a reason', () => {
    expect(output, output).toMatch(/\d+ passed, 0 failed, \d+ not applicable/);
    expect(run.status, output).toBe(0);
    expect(output).toMatch(/^pass\s+tools-call-simple-text/m);
    expect(output).toMatch(/^pass\s+server-initialize/m);
    for (const line of output.split('\n').filter((l) => l.startsWith('n/a'))) {
      expect(line.split(/\s{2,}/).length, line).toBeGreaterThanOrEqual(3);
    }
  });
});
