/**
 * The README's "As a library" examples run as written: each TypeScript block is a program of its own
 * that imports the package by its name (the built dist/, through the package's exports), run from the
 * root of the clone as the README says, and prints what its `// ...` comment says. A file the library
 * cannot load is named in the error's message.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers.js';

const run = promisify(execFile);

/** The TypeScript blocks of the README's "As a library" section. */
function librarySnippets(): string[] {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## As a library\n');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** A folder where `import 'hatchery-mcp'` finds this package (as in a project that installed it). */
let project: string;
beforeAll(() => {
  project = tempDir('hatchery-readme-');
  mkdirSync(path.join(project, 'node_modules'));
  symlinkSync(REPO_ROOT, path.join(project, 'node_modules', 'hatchery-mcp'), 'dir');
});

/** Runs `source` as a TypeScript module of the project, from the clone's root (the README's folder). */
async function runModule(name: string, source: string): Promise<{ stdout: string; stderr: string }> {
  const file = path.join(project, `${name}.mts`);
  writeFileSync(file, source);
  return run(process.execPath, ['--import', 'tsx', file], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
}

describe('the README as a library', () => {
  const snippets = librarySnippets();

  it('has its examples', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(2);
  });

  it.each(snippets.map((s, i) => [i + 1, s] as const))('example %i runs as written', async (i, source) => {
    // What each example says it prints: `console.log(...); // <output>`.
    const expected = [...source.matchAll(/console\.log\(.*\); \/\/ (.*)$/gm)].map((m) => m[1]);
    expect(expected.length, 'the example shows what it prints').toBeGreaterThan(0);
    const { stdout, stderr } = await runModule(`example-${i}`, source);
    expect(stderr).toBe('');
    expect(stdout.trimEnd().split('\n')).toEqual(expected);
  });

  it('a file that cannot be loaded is named in the error message, with where it was looked for', async () => {
    const { stdout } = await runModule(
      'missing',
      [
        "import { loadHatchery } from 'hatchery-mcp';",
        'try {',
        "  await loadHatchery('hatchery/confirm.json');",
        '} catch (err) {',
        '  console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message }));',
        '}',
      ].join('\n'),
    );
    const err = JSON.parse(stdout) as { name: string; code: string; message: string };
    expect(err.name).toBe('HatcheryError');
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(/^hatchery\/confirm\.json: cannot read hatchery file: no such file/);
    expect(err.message).toContain(path.join(REPO_ROOT, 'hatchery', 'confirm.json'));
  });
});
