import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IgnoreRules } from '../../src/loader/ignore.js';
import { findHatcheryFiles } from '../../src/loader/load.js';
import { HatcheryRegistry } from '../../src/mcp/registry.js';
import { runCli, tempDir } from '../helpers.js';
import { echoDef, spawnCli, waitFor } from '../mcp/helpers.js';

/** Which of `paths` the patterns ignore (a trailing "/" marks a folder). */
function ignored(patterns: string, paths: string[]): string[] {
  const rules = new IgnoreRules(patterns);
  return paths.filter((p) => rules.ignores(p.replace(/\/$/, ''), p.endsWith('/')));
}

describe('.hatcheryignore patterns (gitignore syntax)', () => {
  const all = [
    'a.json',
    'b.yaml',
    'drafts/',
    'drafts/x.json',
    'sub/drafts/y.json',
    'sub/a.json',
    'sub/deep/a.json',
    'logs/2024/app.json',
    'test.json',
    'x.test.json',
    'sub/x.test.json',
    '#hash.json',
    '!bang.json',
    'sp ace.json',
  ];

  it('a name without "/" matches at any depth; with a "/" it is anchored', () => {
    expect(ignored('a.json', all)).toEqual(['a.json', 'sub/a.json', 'sub/deep/a.json']);
    expect(ignored('/a.json', all)).toEqual(['a.json']);
    expect(ignored('sub/a.json', all)).toEqual(['sub/a.json']);
  });

  it('*, ? and [...] stay within one path segment', () => {
    expect(ignored('*.test.json', all)).toEqual(['x.test.json', 'sub/x.test.json']);
    expect(ignored('sub/*.json', all)).toEqual(['sub/a.json', 'sub/x.test.json']);
    expect(ignored('?.yaml', all)).toEqual(['b.yaml']);
    expect(ignored('[ab].*', all)).toEqual(['a.json', 'b.yaml', 'sub/a.json', 'sub/deep/a.json']);
    expect(ignored('[!a].json', all)).toEqual(['drafts/x.json', 'sub/drafts/y.json']);
    expect(ignored('[!a]*.yaml', all)).toEqual(['b.yaml']);
  });

  it('** matches any number of folders: leading, trailing and in the middle', () => {
    expect(ignored('**/drafts', all)).toEqual(['drafts/', 'drafts/x.json', 'sub/drafts/y.json']);
    expect(ignored('logs/**', all)).toEqual(['logs/2024/app.json']);
    expect(ignored('sub/**/a.json', all)).toEqual(['sub/a.json', 'sub/deep/a.json']);
    expect(ignored('**', all)).toEqual(all);
  });

  it('a trailing "/" matches folders only, and everything inside them', () => {
    expect(ignored('drafts/', all)).toEqual(['drafts/', 'drafts/x.json', 'sub/drafts/y.json']);
    expect(ignored('a.json/', all)).toEqual([]);
  });

  it('"!" takes a path back; the last matching pattern wins; not out of an ignored folder', () => {
    expect(
      ignored(
        '*.json\n!sub/a.json',
        all.filter((p) => p.endsWith('.json')),
      ),
    ).toEqual(all.filter((p) => p.endsWith('.json') && p !== 'sub/a.json'));
    expect(ignored('!a.json\n*.json', ['a.json'])).toEqual(['a.json']);
    // As in git: a file inside an ignored folder cannot be taken back.
    expect(ignored('drafts/\n!drafts/x.json', ['drafts/x.json'])).toEqual(['drafts/x.json']);
    expect(ignored('drafts/*\n!drafts/x.json', ['drafts/x.json'])).toEqual([]);
  });

  it('comments, blank lines, escapes and trailing spaces', () => {
    expect(ignored('# a comment\n\n   \n\\#hash.json\n\\!bang.json', all)).toEqual([
      '#hash.json',
      '!bang.json',
    ]);
    expect(ignored('b.yaml   \r\nsp ace.json', all)).toEqual(['b.yaml', 'sp ace.json']);
    expect(ignored('sp\\ ace.json\\ ', ['sp ace.json', 'sp ace.json '])).toEqual(['sp ace.json ']);
    expect(ignored('a\\*.json', ['a*.json', 'ab.json'])).toEqual(['a*.json']);
    expect(ignored('', all)).toEqual([]);
    expect(new IgnoreRules('# only\n').empty).toBe(true);
  });

  it('regex characters in patterns are literal', () => {
    expect(ignored('a+(b).json', ['a+(b).json', 'aab.json'])).toEqual(['a+(b).json']);
    expect(ignored('[z-', ['[z-', 'z'])).toEqual(['[z-']);
  });
});

/** A folder with hatcheries, other JSON files and an ignore file. */
function servedFolder(): string {
  const dir = tempDir();
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  };
  write('good.json', JSON.stringify(echoDef('good')));
  write(
    'good2.yaml',
    'name: good2\ndesc: d\nnodes:\n  - {type: tool, tool_name: echo, tool_args: {text: hi}}\n',
  );
  write('package.json', JSON.stringify({ name: 'pkg', version: '1.0.0', description: 'x' }));
  write('tsconfig.json', JSON.stringify({ compilerOptions: { strict: true } }));
  write(
    'cases/a.test.json',
    JSON.stringify({ hatchery: 'good.json', cases: [{ input: 'x', nodes: ['Echo'] }] }),
  );
  write('settings.yml', 'theme: dark\n');
  write('drafts/wip.json', JSON.stringify(echoDef('wip')));
  write('drafts/keep.json', JSON.stringify(echoDef('keep')));
  write('broken.json', '{ "name": ');
  write('.hatcheryignore', '# work in progress\ndrafts/*\n!drafts/keep.json\n');
  return dir;
}

describe('finding hatchery files in a folder', () => {
  it('lists JSON and YAML hatcheries; skips ignored paths and files that are not hatcheries', async () => {
    const dir = servedFolder();
    expect((await findHatcheryFiles(dir)).map((f) => path.relative(dir, f))).toEqual([
      'broken.json',
      'drafts/keep.json',
      'good.json',
      'good2.yaml',
    ]);
  });

  it('validate <dir> reports only the broken hatchery; validate <file> says what is not a hatchery', async () => {
    const dir = servedFolder();
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(3);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(
      [
        `${path.join(dir, 'broken.json')}: (root) (line 1, column 11): invalid JSON (at the end of the file): Unexpected end of JSON input`,
        `${path.join(dir, 'drafts/keep.json')}: ok (keep, 1 node, needs input)`,
        `${path.join(dir, 'good.json')}: ok (good, 1 node, needs input)`,
        `${path.join(dir, 'good2.yaml')}: ok (good2, 1 node)`,
      ].sort(),
    );
    const pkg = await runCli(['validate', path.join(dir, 'package.json')]);
    expect(pkg.code).toBe(3);
    expect(pkg.stdout).toBe(
      `${path.join(dir, 'package.json')}: (root) (line 1, column 1): not a hatchery file: it has no "nodes" (a hatchery is an object with "name", "desc" and "nodes")\n`,
    );
  });
});

describe('serving a folder', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('the registry skips files that are not hatcheries quietly, and follows edits of .hatcheryignore', async () => {
    const dir = servedFolder();
    rmSync(path.join(dir, 'broken.json'));
    const reg = new HatcheryRegistry(dir);
    const start = await reg.loadAll();
    expect(start.problems).toEqual([]);
    expect(reg.entries().map((e) => e.name)).toEqual(['good', 'good2', 'keep']);
    // A JSON file that loses its nodes is no hatchery any more: it stops being served, quietly.
    writeFileSync(path.join(dir, 'good.json'), JSON.stringify({ name: 'good', desc: 'no nodes yet' }));
    const edit = await reg.refresh([path.join(dir, 'good.json')]);
    expect(edit).toEqual({ added: [], updated: [], removed: ['good'], problems: [] });
    writeFileSync(path.join(dir, '.hatcheryignore'), '*.yaml\n');
    const change = await reg.refresh([path.join(dir, '.hatcheryignore')]);
    expect(change).toEqual({ added: ['wip'], updated: [], removed: ['good2'], problems: [] });
    expect(reg.isHatcheryFile(path.join(dir, 'good2.yaml'))).toBe(false);
  });

  it('serve --dir: YAML served, no start-up errors for package.json or test files, ignore file hot-reloaded', async () => {
    const dir = servedFolder();
    rmSync(path.join(dir, 'broken.json'));
    const s = await spawnCli(dir);
    cleanups.push(s.close);
    const names = async () =>
      (await s.client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('hatchery_'));
    expect((await names()).sort()).toEqual(['good', 'good2', 'keep']);
    expect(s.stderr()).not.toMatch(/package\.json|tsconfig|a\.test\.json|settings\.yml/);
    // The YAML file is served as written, as YAML.
    const res = await s.client.readResource({ uri: 'hatchery://good2' });
    expect(res.contents).toEqual([
      {
        uri: 'hatchery://good2',
        mimeType: 'application/yaml',
        text: 'name: good2\ndesc: d\nnodes:\n  - {type: tool, tool_name: echo, tool_args: {text: hi}}\n',
      },
    ]);
    writeFileSync(path.join(dir, '.hatcheryignore'), 'good*\n');
    await waitFor(
      async () => (await names()).sort().join() === 'keep,wip',
      10_000,
      'the new ignore patterns',
    );
  });
});
