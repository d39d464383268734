/**
 * hatchery/ holds the examples and, below tests/, their test files and cassettes. Those are not
 * hatcheries: `validate hatchery` and `serve --dir hatchery` must pass over them without a word, and
 * every example must validate with no warning (--strict), as a user's first look at the project.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers.js';
import { EXAMPLES, spawnCli } from '../mcp/helpers.js';

/** The example files at the top of hatchery/, as the commands print them. */
const examples = readdirSync(EXAMPLES)
  .filter((f) => /\.(json|ya?ml)$/.test(f))
  .sort();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('the example folder, with its tests/ and cassettes', () => {
  it('really holds test files and cassettes below tests/', () => {
    const tests = readdirSync(path.join(EXAMPLES, 'tests'));
    expect(tests.filter((f) => f.endsWith('.test.yaml')).length).toBeGreaterThanOrEqual(9);
    expect(readdirSync(path.join(EXAMPLES, 'tests/cassettes')).length).toBeGreaterThanOrEqual(9);
    expect(examples).toContain('design-qa.yaml');
  });

  it('validate and validate --strict: every example ok, no warning, nothing else reported', async () => {
    for (const args of [['validate'], ['validate', '--strict']]) {
      const r = await runCli([...args, 'hatchery'], { cwd: REPO_ROOT });
      expect({ code: r.code, stderr: r.stderr }).toEqual({
        code: 0,
        stderr: `${examples.length} valid, 0 invalid\n`,
      });
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines.map((l) => l.slice(0, l.indexOf(': ')))).toEqual(examples.map((f) => `hatchery/${f}`));
      for (const l of lines) expect(l).toMatch(/^hatchery\/[\w.-]+: ok \(/);
    }
  });

  it('serve --dir hatchery serves the examples only, with no broken file reported', async () => {
    const s = await spawnCli(EXAMPLES);
    cleanups.push(s.close);
    const listed = await s.client.callTool({ name: 'hatchery_list', arguments: {} });
    const { hatcheries, problems } = listed.structuredContent as {
      hatcheries: { file: string }[];
      problems?: string[];
    };
    expect(problems).toBeUndefined();
    expect(hatcheries.map((h) => h.file).sort()).toEqual(examples);
    expect(s.stderr()).toMatch(new RegExp(`^hatchery-mcp: serving ${examples.length} hatcheries from `));
    expect(s.stderr().trimEnd().split('\n')).toHaveLength(1);
  });
});
