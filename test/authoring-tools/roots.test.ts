/**
 * Issue 10: constant `files` and `write_output` paths outside the roots a run is confined to are
 * errors at load time; the roots are the loading Runtime's (LoadOptions.roots).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../src/runtime/runtime.js';
import { runtimeRoots } from '../../src/tools/path-check.js';
import { tempDir } from '../helpers.js';
import { problemsIn } from '../tools/helpers.js';

const def = (extra: Record<string, unknown>, node: Record<string, unknown> = {}) => ({
  name: 'm',
  desc: 'd',
  ...extra,
  nodes: [{ name: 'A', type: 'tool', tool_name: 'echo', tool_args: { text: 'x' }, ...node }],
});

/** Declares the ctx.day the templated paths read, so the file has no other problem. */
const DAY = { day: 'the day of the log' };

describe('constant paths against the roots', () => {
  it('reports files and write_output outside them, naming the folders and the flag', () => {
    const dir = tempDir();
    const roots = { read: [dir], write: [path.join(dir, 'out')] };
    expect(
      problemsIn(dir, def({ files: { pw: '../../etc/passwd' } }, { write_output: '/etc/x.txt' }), { roots }),
    ).toEqual([
      `files/pw: "../../etc/passwd" (${path.resolve(dir, '../../etc/passwd')}) is outside the folders runs may read (${dir}); move the file below one of them, or allow its folder with --allow-root DIR`,
      `nodes/0/write_output: "/etc/x.txt" (/etc/x.txt) is outside the folders runs may write (${dir}/out); write below one of them, or allow a folder with --allow-write DIR`,
    ]);
  });

  it('accepts paths inside, and leaves templated paths to the run-time guard', () => {
    const dir = tempDir();
    const roots = { read: [], write: [dir] };
    expect(
      problemsIn(
        dir,
        def({ files: { s: 'style.md' }, inputs: DAY }, { write_output: 'logs/{{ ctx.day }}.txt' }),
        {
          roots,
        },
      ),
    ).toEqual([]);
    expect(
      problemsIn(dir, def({ inputs: DAY }, { write_output: '/elsewhere/{{ ctx.day }}.txt' }), { roots }),
    ).toEqual([]);
  });

  it('follows links: a path inside whose real location is outside is refused', () => {
    const dir = tempDir();
    const outside = tempDir();
    writeFileSync(path.join(outside, 'secret.txt'), 's');
    symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'));
    symlinkSync(outside, path.join(dir, 'away'));
    const roots = { read: [], write: [dir] };
    expect(
      problemsIn(dir, def({ files: { s: 'link.txt' } }, { write_output: 'away/new.txt' }), { roots }),
    ).toEqual([
      `files/s: "link.txt" (${dir}/link.txt) is outside the folders runs may read (${dir}); move the file below one of them, or allow its folder with --allow-root DIR`,
      `nodes/0/write_output: "away/new.txt" (${dir}/away/new.txt) is outside the folders runs may write (${dir}); write below one of them, or allow a folder with --allow-write DIR`,
    ]);
  });

  it('without roots (a load apart from any Runtime) nothing is checked', () => {
    const dir = tempDir();
    expect(problemsIn(dir, def({ files: { pw: '/etc/passwd' } }, { write_output: '/etc/x.txt' }))).toEqual(
      [],
    );
  });

  it('a Runtime loads with its own roots: the working folder and --allow-root/--allow-write', async () => {
    const dir = tempDir();
    const data = tempDir();
    const file = path.join(dir, 'main.json');
    writeFileSync(
      file,
      JSON.stringify(
        def({ files: { d: path.join(data, 'd.txt') } }, { write_output: path.join(data, 'o.txt') }),
      ),
    );
    const err = await new Runtime({ env: {}, cwd: dir }).load(file).catch((e) => e);
    expect(err.code).toBe('INVALID_FILE');
    expect(err.problems.map((p: { path: string }) => p.path)).toEqual(['files/d', 'nodes/0/write_output']);
    writeFileSync(path.join(data, 'd.txt'), 'data');
    mkdirSync(path.join(dir, 'x'));
    const h = await new Runtime({ env: {}, cwd: path.join(dir, 'x'), allowRoots: [data] }).load(file);
    expect(h.name).toBe('m');
  });

  it('runtimeRoots gives what a Runtime with the same options confines runs to', () => {
    const dir = tempDir();
    const roots = runtimeRoots({ cwd: dir, allowRoots: ['/srv/a'], allowWrite: ['/srv/b'] });
    expect({ read: roots.read, write: roots.write }).toEqual({
      read: [dir, '/srv/a', '/srv/b'],
      write: [dir, '/srv/a', '/srv/b'],
    });
    // And the runtime's rule for a constant path to write: the file's own folder stays closed.
    expect(roots.writeProblem?.('x.txt', path.join(dir, 'x.txt'), dir)).toContain("hatchery's own folder");
    expect(
      roots.writeProblem?.('x.txt', path.join(dir, 'out', 'x.txt'), path.join(dir, 'flows')),
    ).toBeUndefined();
    expect(roots.writeProblem?.('x', '/etc/x', dir)).toContain('outside the write roots');
  });
});
