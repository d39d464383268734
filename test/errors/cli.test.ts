import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/main.js';
import { runCli, tempDir } from '../helpers.js';

/** A valid one-node hatchery file to hang options on. */
function okFile(): string {
  const file = path.join(tempDir(), 'ok.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'ok',
      desc: 'd',
      nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'x' } }],
    }),
  );
  return file;
}

describe('the command line names a mistake in one line, with the nearest valid word', () => {
  it('an unknown command: the nearest command and a pointer to --help, not the whole help', async () => {
    const r = await runCli(['vaildate', 'x.json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'error: unknown command "vaildate"; did you mean "validate"?\nrun "hatchery-mcp --help" for the commands\n',
    );
  });

  it('help of an unknown command is the same one-line mistake; help of every command is its own', async () => {
    const bad = await runCli(['help', 'vaildate']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('unknown command "vaildate"; did you mean "validate"?');
    const helps = await Promise.all(
      COMMANDS.filter((c) => c !== 'help').map(async (c) => [c, await runCli(['help', c])] as const),
    );
    for (const [c, r] of helps) {
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toMatch(new RegExp(`hatchery-mcp (\\[)?${c}`));
    }
  });

  it('a misspelt hatchery file names the nearest file of its folder, for run, validate, graph and hatch:', async () => {
    const dir = path.dirname(okFile());
    const typo = path.join(dir, 'okk.json');
    const [run, validate, graph, far] = await Promise.all([
      runCli(['run', typo]),
      runCli(['validate', typo]),
      runCli(['graph', typo]),
      runCli(['run', path.join(dir, 'unrelated-name.json')]),
    ]);
    for (const r of [run, validate, graph]) {
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('no such file');
      expect(r.stderr).toContain('(did you mean "ok.json"?)');
    }
    expect(far.stderr).toContain('no such file');
    expect(far.stderr).not.toContain('did you mean');
    // The same for a hatch: reference inside a file, at load time.
    const caller = path.join(dir, 'caller.json');
    writeFileSync(
      caller,
      JSON.stringify({
        name: 'caller',
        desc: 'd',
        nodes: [{ type: 'tool', tool_name: 'hatch:okk.json', tool_args: { input: 'x' } }],
      }),
    );
    const sub = await runCli(['validate', caller]);
    expect(sub.code).toBe(3);
    expect(sub.stdout).toContain('file "okk.json" not found');
    expect(sub.stdout).toContain('(did you mean "ok.json"?)');
  });

  it('serve, validate and test in a folder with no ./hatchery point at hatchery-mcp init', async () => {
    const cwd = tempDir();
    const [serve, validate, test] = await Promise.all([
      runCli([], { cwd }),
      runCli(['validate'], { cwd }),
      runCli(['test'], { cwd }),
    ]);
    for (const r of [serve, validate, test]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('hatchery-mcp init');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(serve.stderr).toContain('--dir hatchery: no such folder');
  });

  it('an unknown command with nothing near; a file name as a command suggests "run"', async () => {
    const [far, file] = await Promise.all([runCli(['frobnicate']), runCli(['notes.json'])]);
    expect(far.code).toBe(2);
    expect(far.stderr).toBe(
      'error: unknown command "frobnicate"\nrun "hatchery-mcp --help" for the commands\n',
    );
    expect(file.stderr).toBe(
      'error: unknown command "notes.json"; to run a file, write "hatchery-mcp run notes.json"\nrun "hatchery-mcp --help" for the commands\n',
    );
  });

  it('the commands suggested from include init and doctor', async () => {
    expect(COMMANDS).toEqual(
      expect.arrayContaining([
        'run',
        'validate',
        'test',
        'graph',
        'schema',
        'convert',
        'serve',
        'init',
        'doctor',
      ]),
    );
    const r = await runCli(['doctr']);
    expect(r.stderr.split('\n')[0]).toBe('error: unknown command "doctr"; did you mean "doctor"?');
  });

  it('an unknown option names the command and the nearest option, for every command', async () => {
    const file = okFile();
    const cases: [string[], string][] = [
      [['run', file, '--inptu', 'hi'], 'error: unknown option "--inptu" for "run"; did you mean "--input"?'],
      [['validate', file, '--jsn'], 'error: unknown option "--jsn" for "validate"; did you mean "--json"?'],
      [
        ['test', '--record-mising'],
        'error: unknown option "--record-mising" for "test"; did you mean "--record-missing"?',
      ],
      [
        ['graph', file, '--fromat', 'svg'],
        'error: unknown option "--fromat" for "graph"; did you mean "--format"?',
      ],
      [
        ['convert', file, '--outptu', 'x.yaml'],
        'error: unknown option "--outptu" for "convert"; did you mean "--output"?',
      ],
      [['serve', '--dri', 'x'], 'error: unknown option "--dri" for "serve"; did you mean "--dir"?'],
      [['schema', '--hepl'], 'error: unknown option "--hepl" for "schema"; did you mean "--help"?'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach((r, i) => {
      const [args, first] = cases[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n'), args.join(' ')).toEqual([
        first,
        `run "hatchery-mcp ${args[0]} --help" for its options`,
        '',
      ]);
    });
  });

  it('an option without its value, and a flag given a value, are named', async () => {
    const file = okFile();
    const [missing, ambiguous, flag] = await Promise.all([
      runCli(['run', file, '--input']),
      runCli(['run', file, '--input', '--quiet']),
      runCli(['run', file, '--quiet=yes']),
    ]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: 'error: option "--input" for "run" needs a value; write --input <value>\n',
    });
    expect(ambiguous).toMatchObject({
      code: 2,
      stderr:
        'error: option "--input" for "run" needs a value, but "--quiet" is an option; write --input=<value> for a value that starts with "-"\n',
    });
    expect(flag).toMatchObject({
      code: 2,
      stderr: 'error: option "--quiet" for "run" takes no value; write --quiet alone\n',
    });
  });
});
