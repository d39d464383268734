import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fails, jsonReport, textReport } from '../../src/cli/validate.js';
import type { Hatchery } from '../../src/engine/contracts.js';
import { echo, hatch, load, runCli, tempDir } from '../helpers.js';

/** A folder with one valid file, one invalid one (two mistakes, pretty-printed for readable positions) and one that is not JSON. */
function folder(): { dir: string; good: string; bad: string; broken: string } {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'sub'));
  const good = path.join(dir, 'good.json');
  const bad = path.join(dir, 'sub', 'bad.json');
  const broken = path.join(dir, 'sub', 'broken.json');
  writeFileSync(
    good,
    JSON.stringify(hatch([echo('A', 'a', { next: 'B' }), echo('B', 'b')], { name: 'good' })),
  );
  writeFileSync(
    bad,
    JSON.stringify(
      hatch([echo('A', 'a', { next: 'Nowhere' }), { name: 'B', type: 'tool', tool_nam: 'echo' }]),
      null,
      2,
    ),
  );
  writeFileSync(broken, '{ "name": "x", ');
  return { dir, good, bad, broken };
}

describe('hatchery-mcp validate', () => {
  it('text mode: "ok (name, N nodes)" per valid file, every problem as file: path: message, exit 3', async () => {
    const { dir, good, bad, broken } = folder();
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(3);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain(`${good}: ok (good, 2 nodes)`);
    expect(lines).toContain(`${bad}: nodes/0/next (line 12, column 7): no node named "Nowhere"; nodes: A, B`);
    expect(lines).toContain(
      `${bad}: nodes/1/tool_nam (line 17, column 7): unknown key "tool_nam": did you mean "tool_name"? (tool_name is required)`,
    );
    expect(lines).toContain(
      `${broken}: (root) (line 1, column 16): invalid JSON (at the end of the file): Expected double-quoted property name`,
    );
    expect(r.stderr).toBe('1 valid, 2 invalid\n');
  });

  it('--json: one JSON object per line and nothing else on stdout', async () => {
    const { dir, good, bad, broken } = folder();
    const r = await runCli(['validate', '--json', dir]);
    expect(r.code).toBe(3);
    const objects = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objects).toContainEqual({ file: good, ok: true, name: 'good', nodes: 2, inputRequired: false });
    const next = objects.find((o) => o.path === 'nodes/0/next')!;
    expect(next).toMatchObject({
      file: bad,
      severity: 'error',
      message: expect.stringContaining('"Nowhere"'),
    });
    expect(Object.keys(next).sort()).toEqual([
      'column',
      'file',
      'fix',
      'line',
      'message',
      'path',
      'severity',
    ]);
    expect(objects.filter((o) => o.file === bad).length).toBeGreaterThanOrEqual(2);
    expect(objects.find((o) => o.file === broken)).toMatchObject({ path: '', severity: 'error' });
    // One ok line for the good file, problems only for the others.
    expect(objects.filter((o) => o.ok === true)).toHaveLength(1);
    expect(new Set(objects.map((o) => o.file))).toEqual(new Set([good, bad, broken]));
    expect(r.stderr).toBe('1 valid, 2 invalid\n');
  });

  it('exits 0 when every file is valid, 2 on a bad command line; --help documents the exit codes', async () => {
    const { good } = folder();
    const [ok, strict, unknown, missing, help] = await Promise.all([
      runCli(['validate', good]),
      runCli(['validate', '--strict', '--json', good]),
      runCli(['validate', '--frobnicate', good]),
      runCli(['validate', path.join(tempDir(), 'none.json')]),
      runCli(['validate', '--help']),
    ]);
    expect(ok).toMatchObject({ code: 0, stdout: `${good}: ok (good, 2 nodes)\n` });
    expect(strict.code).toBe(0);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option "--frobnicate" for "validate"');
    expect(missing.code).toBe(2);
    expect(help.stdout).toContain('Exit codes: 0 all valid, 2 bad command line, 3 problems found');
    expect(help.stdout).toContain('--strict');
    expect(help.stdout).toContain('--json');
  });
});

describe('validate of a file whose only problem is a warning', () => {
  /** A valid file (it needs input) with a node nothing routes to, pretty-printed: "Orphan" is at line 13. */
  function warnedFile(): string {
    const file = path.join(tempDir(), 'warned.json');
    writeFileSync(
      file,
      JSON.stringify(hatch([echo('A', '{{ ctx.input }}'), echo('Orphan', 'o')], { name: 'warned' }), null, 2),
    );
    return file;
  }
  const unreachable =
    'node "Orphan" is unreachable: no run from the start node "A" gets to it (nothing routes to it through next, on_limit, branches, a map\'s node, a loop\'s body or a node: tool)';
  const fix = 'route to it from a node that runs, or remove it';

  it('text: the ok line, then "file: path (line L, column C): warning: ...; fix", exit 0; --strict exits 3', async () => {
    const file = warnedFile();
    const [plain, strict] = await Promise.all([
      runCli(['validate', file]),
      runCli(['validate', '--strict', file]),
    ]);
    const expected = `${file}: ok (warned, 2 nodes, needs input)\n${file}: nodes/1 (line 13, column 5): warning: ${unreachable}; ${fix}\n`;
    expect(plain).toMatchObject({ code: 0, stdout: expected, stderr: '1 valid, 0 invalid\n' });
    expect(strict).toMatchObject({ code: 3, stdout: expected, stderr: '0 valid, 1 invalid\n' });
  });

  it('--json: severity "warning" with line and column numbers, then the ok line; --strict exits 3', async () => {
    const file = warnedFile();
    const [plain, strict] = await Promise.all([
      runCli(['validate', '--json', file]),
      runCli(['validate', '--json', '--strict', file]),
    ]);
    const parse = (out: string) =>
      out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
    const expected = [
      { file, path: 'nodes/1', line: 13, column: 5, severity: 'warning', message: unreachable, fix },
      { file, ok: true, name: 'warned', nodes: 2, inputRequired: true },
    ];
    expect(plain.code).toBe(0);
    expect(parse(plain.stdout)).toEqual(expected);
    expect(strict.code).toBe(3);
    expect(parse(strict.stdout)).toEqual(expected);
  });
});

describe('validate reports of a file with warnings', () => {
  // A loaded hatchery given a warning of our own, so the report format is checked apart from the checks.
  const h = load(hatch([echo('A', 'a')], { name: 'warned' }));
  const warned: Hatchery = {
    ...h,
    warnings: [
      {
        path: 'nodes/0/tool_args/text',
        severity: 'warning',
        message: 'the template never uses ctx.input',
        fix: 'write {{ ctx.input }} where the input belongs',
        line: 7,
        column: 15,
      },
    ],
  };
  const report = { file: 'w.json', hatchery: warned, problems: warned.warnings };

  it('text: the ok line (with "needs input" when the loader says so), then "warning:" lines', () => {
    expect(textReport(report)).toBe(
      'w.json: ok (warned, 1 node)\n' +
        'w.json: nodes/0/tool_args/text (line 7, column 15): warning: the template never uses ctx.input; write {{ ctx.input }} where the input belongs\n',
    );
    const needs = { ...report, hatchery: { ...warned, inputRequired: true } as Hatchery };
    expect(textReport(needs)).toMatch(/^w\.json: ok \(warned, 1 node, needs input\)\n/);
  });

  it('json: the warning with its severity, position and fix, then the ok line', () => {
    expect(
      jsonReport(report)
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        file: 'w.json',
        path: 'nodes/0/tool_args/text',
        line: 7,
        column: 15,
        severity: 'warning',
        message: 'the template never uses ctx.input',
        fix: 'write {{ ctx.input }} where the input belongs',
      },
      { file: 'w.json', ok: true, name: 'warned', nodes: 1, inputRequired: false },
    ]);
  });

  it('warnings pass the check, and fail it with --strict', () => {
    expect(fails(report, false)).toBe(false);
    expect(fails(report, true)).toBe(true);
    expect(fails({ ...report, problems: [] }, true)).toBe(false);
  });
});
