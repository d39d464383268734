import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tempDir } from '../helpers.js';

const EXAMPLES = path.join(REPO_ROOT, 'hatchery');

describe('hatchery-mcp convert', () => {
  it('every JSON example: JSON -> YAML -> JSON gives the original object back', async () => {
    const dir = tempDir();
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const f of files) {
      const yaml = path.join(dir, f.replace(/\.json$/, '.yaml'));
      const back = path.join(dir, `back-${f}`);
      const a = await runCli(['convert', path.join(EXAMPLES, f), '-o', yaml]);
      expect(a).toMatchObject({ code: 0, stderr: `wrote ${yaml}\n` });
      const b = await runCli(['convert', yaml, '-o', back]);
      expect(b.code).toBe(0);
      expect(JSON.parse(readFileSync(back, 'utf8'))).toEqual(
        JSON.parse(readFileSync(path.join(EXAMPLES, f), 'utf8')),
      );
      // The YAML form is a hatchery as good as the JSON one.
      expect((await runCli(['validate', yaml])).code).toBe(0);
    }
  }, 60_000);

  it('multi-line prompts become block scalars; $schema the YAML editor line; _comment stays', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'p.json');
    writeFileSync(
      file,
      JSON.stringify({
        $schema: '../schema/hatchery.schema.json',
        _comment: 'kept as a key',
        name: 'p',
        desc: 'd',
        nodes: [{ usr_prompt: 'Line one\nLine two: {{ ctx.input }}\n' }],
      }),
    );
    const r = await runCli(['convert', file]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`# yaml-language-server: $schema=../schema/hatchery.schema.json
_comment: kept as a key
name: p
desc: d
nodes:
  - usr_prompt: |
      Line one
      Line two: {{ ctx.input }}
`);
    const yaml = path.join(dir, 'p.yaml');
    writeFileSync(yaml, r.stdout);
    const back = await runCli(['convert', yaml]);
    expect(JSON.parse(back.stdout)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    expect(back.stdout.startsWith('{\n  "$schema": "../schema/hatchery.schema.json",\n')).toBe(true);
  });

  it('YAML aliases are written out in JSON', async () => {
    const dir = tempDir();
    const yaml = path.join(dir, 'a.yml');
    writeFileSync(
      yaml,
      'name: a\ndesc: d\n_m: &m { model: "openai:x" }\nnodes:\n  - { <<: *m, usr_prompt: hi }\n',
    );
    const r = await runCli(['convert', yaml]);
    expect(JSON.parse(r.stdout)).toEqual({
      name: 'a',
      desc: 'd',
      _m: { model: 'openai:x' },
      nodes: [{ model: 'openai:x', usr_prompt: 'hi' }],
    });
  });

  it('refuses what it cannot do, saying why', async () => {
    const dir = tempDir();
    const json = path.join(dir, 'x.json');
    writeFileSync(json, '{"name": "x", "desc": "d", "nodes": [{"usr_prompt": "hi"}]}');
    const yaml = path.join(dir, 'x.yaml');
    writeFileSync(yaml, 'name: x\nvalue: .nan\n');
    const [wrongExt, exists, notHatch, nan, broken, none] = await Promise.all([
      runCli(['convert', json, '-o', path.join(dir, 'y.json')]),
      runCli(['convert', json, '-o', yaml]),
      runCli(['convert', path.join(dir, 'notes.txt')]),
      runCli(['convert', yaml]),
      (async () => {
        writeFileSync(path.join(dir, 'b.yaml'), 'a: [1\n');
        return runCli(['convert', path.join(dir, 'b.yaml')]);
      })(),
      runCli(['convert', path.join(dir, 'missing.json')]),
    ]);
    expect(wrongExt).toMatchObject({
      code: 2,
      stderr: `error: convert: a JSON file becomes YAML, so the output "${path.join(dir, 'y.json')}" should end in .yaml or .yml\n`,
    });
    expect(exists).toMatchObject({
      code: 2,
      stderr: `error: convert: "${yaml}" exists; pass --force to overwrite it\n`,
    });
    expect(notHatch).toMatchObject({
      code: 2,
      stderr: `error: convert: "${path.join(dir, 'notes.txt')}" is neither .json nor .yaml/.yml\n`,
    });
    expect(nan).toMatchObject({
      code: 1,
      stderr: `error: convert: "${yaml}" holds values the JSON form cannot keep (such as .nan or .inf); write them as strings\n`,
    });
    expect(broken.code).toBe(3);
    expect(broken.stderr).toMatch(/^\S+b\.yaml \(line 2, column 1\): invalid YAML/);
    expect(none).toMatchObject({
      code: 1,
      stderr: `error: convert: cannot read "${path.join(dir, 'missing.json')}": no such file\n`,
    });
    const forced = await runCli(['convert', json, '-o', yaml, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(yaml, 'utf8')).toBe('name: x\ndesc: d\nnodes:\n  - usr_prompt: hi\n');
  });
});
