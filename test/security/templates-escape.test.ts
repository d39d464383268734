import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { loadHatcheryObject } from '../../src/loader/load.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, runCli, tempDir } from '../helpers.js';
import { spawnCli, textOf, writeHatchery } from '../mcp/helpers.js';
import { CANARY, CANARY_VAR, CORPUS, type Expect, MARKER_VAR } from './templates-corpus.js';

const allIds = CORPUS.map((_, i) => `F${String(i + 1).padStart(2, '0')}`);

/** The one-form hatchery of form `i`, as the loader sees it. */
function formHatchery(i: number): Record<string, unknown> {
  return hatch([{ name: allIds[i], type: 'tool', tool_name: 'echo', tool_args: { text: CORPUS[i]![0] } }]);
}

// Forms that read a name no template variable has (`process`, `require`...) are refused when the
// file loads; the corpus hatchery run below holds the forms that load, so the sandbox sees them all.
const refusedAtLoad = new Set(
  allIds.filter((_, i) => !loadHatcheryObject(formHatchery(i), path.join(tempDir(), 'f.json')).ok),
);
const forms = CORPUS.filter((_, i) => !refusedAtLoad.has(allIds[i]!));
const ids = allIds.filter((id) => !refusedAtLoad.has(id));
const marker = path.join(tempDir(), 'pwned');
// The canary and the marker path live in the environment of every process that renders the corpus.
const canaryEnv = { [CANARY_VAR]: CANARY, [MARKER_VAR]: marker };

/** The whole corpus as one hatchery: a parallel node whose branches each render one form. */
function corpusHatchery(): Record<string, unknown> {
  return hatch(
    [
      { name: 'Fan', type: 'parallel', branches: ids, on_error: 'continue' },
      ...forms.map(([src], i) => ({
        name: ids[i],
        type: 'tool',
        tool_name: 'echo',
        tool_args: { text: src },
      })),
    ],
    { name: 'corpus', max_steps: 1000 },
  );
}

/** Checks one branch of the joined output against what its form must produce. */
function checkBranch(id: string, text: string, expected: Expect): void {
  if ('output' in expected) {
    expect(text, id).toMatch(expected.output);
    return;
  }
  expect(text, id).toMatch(new RegExp(`^error: .*node "${id}": tool_args/text: `));
  if ('deny' in expected) expect(text, id).toMatch(expected.deny);
  else expect(text, id).toMatch(/undefined variable `/);
}

/** Asserts that nothing of the process leaked into `output` and that no shell command ran. */
function assertNoLeak(output: string): void {
  expect(output).not.toContain(CANARY);
  expect(output).not.toContain(process.execPath);
  expect(output).not.toMatch(/\[object process\]|pwned/);
  expect(existsSync(marker)).toBe(false);
}

/** Splits the parallel node's default join ("## F01\n<text>\n\n## F02...") by branch. */
function branches(output: string): Map<string, string> {
  const parts = output.split(/^## (F\d\d)\n/m).slice(1);
  const m = new Map<string, string>();
  for (let i = 0; i < parts.length; i += 2) m.set(parts[i]!, parts[i + 1]!.replace(/\n\n$/, ''));
  return m;
}

function checkAll(output: string): void {
  assertNoLeak(output);
  const got = branches(output);
  expect([...got.keys()]).toEqual(ids);
  for (const [i, [, expected]] of forms.entries()) checkBranch(ids[i]!, got.get(ids[i]!)!, expected);
}

const saved = { ...process.env };
beforeAll(() => Object.assign(process.env, canaryEnv));
afterAll(() => {
  for (const k of Object.keys(canaryEnv)) if (saved[k] === undefined) delete process.env[k];
});

describe(`template escape corpus (${CORPUS.length} forms)`, () => {
  it('has at least 30 forms', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(30);
  });

  it('refuses at load time only forms that read no variable of the file, naming the field', () => {
    // F35-F37 read `process`, `global`, `require`; F66 and F67 name a filter and a test nobody has.
    expect([...refusedAtLoad]).toEqual(['F35', 'F36', 'F37', 'F66', 'F67']);
    for (const id of refusedAtLoad) {
      const res = loadHatcheryObject(formHatchery(allIds.indexOf(id)), path.join(tempDir(), 'f.json'));
      expect(res.ok).toBe(false);
      if (res.ok) continue;
      assertNoLeak(res.error.message);
      expect(res.error.message).toMatch(
        /nodes\/0\/tool_args\/text: ("(process|global|require)" \(line 1, column 4 of the template\) is not a template variable|template syntax error at line 1, column \d+ of the template: unknown (filter|test) "constructor")/,
      );
    }
  });

  it.each(CORPUS.map(([src, expected], i) => [allIds[i]!, src, expected] as const))(
    '%s in-process: %s',
    async (id, _src, expected) => {
      if (refusedAtLoad.has(id)) return;
      const res = loadHatcheryObject(formHatchery(allIds.indexOf(id)), path.join(tempDir(), 'f.json'));
      if (!res.ok) throw res.error;
      const h = res.hatchery;
      let output: string;
      try {
        output = (await new Runtime({ env: {} }).run(h, { input: 'hello' })).output;
      } catch (err) {
        expect(err).toBeInstanceOf(HatcheryError);
        const e = err as HatcheryError;
        assertNoLeak(`${e.message} ${String(e.cause ?? '')}`);
        expect(e.context).toMatchObject({ node: id, field: 'tool_args/text' });
        if ('output' in expected) throw err;
        if ('deny' in expected) {
          expect(e.code).toBe('TEMPLATE');
          expect(e.message).toMatch(expected.deny);
        } else expect(e.code).toBe('UNDEFINED_VARIABLE');
        return;
      }
      assertNoLeak(output);
      expect('output' in expected, `${id} rendered ${JSON.stringify(output)}`).toBe(true);
      expect(output).toMatch((expected as { output: RegExp }).output);
    },
  );

  it('refuses every form through the built CLI (one process for the whole corpus)', async () => {
    const file = writeHatchery(tempDir(), 'corpus.json', corpusHatchery());
    const r = await runCli(['run', file, '--input', 'hello'], { env: canaryEnv });
    expect(r.code, r.stderr).toBe(0);
    assertNoLeak(r.stderr);
    checkAll(r.stdout.replace(/\n$/, ''));
  });

  it('refuses every form over MCP stdio (one server for the whole corpus)', async () => {
    const dir = tempDir();
    writeHatchery(dir, 'corpus.json', corpusHatchery());
    const s = await spawnCli(dir, { env: canaryEnv });
    try {
      const res = await s.client.callTool({ name: 'corpus', arguments: { input: 'hello' } });
      expect(res.isError ?? false).toBe(false);
      checkAll(textOf(res));
      assertNoLeak(s.stderr());
    } finally {
      await s.close();
    }
  });
});
