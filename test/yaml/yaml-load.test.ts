import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ValidationProblem } from '../../src/core/errors.js';
import { loadHatcheryText } from '../../src/loader/load.js';
import { locateProblems } from '../../src/loader/positions.js';
import { REPO_ROOT } from '../helpers.js';

/** The error message of an invalid file's text (the file name says JSON or YAML). */
function errorOf(text: string, file = '/h/a.yaml'): string {
  const res = loadHatcheryText(text, file);
  if (res.ok) throw new Error('expected the file to be invalid');
  return res.error.message;
}

const HELLO = `# A greeting
name: hello
desc: Says hello
nodes:
  - name: Answer
    usr_prompt: |
      Say hello to {{ ctx.input }}.
      Be brief.
`;

describe('YAML hatcheries', () => {
  it('load like the same file in JSON, block scalars included', () => {
    const yaml = loadHatcheryText(HELLO, '/h/hello.yaml');
    const json = loadHatcheryText(
      JSON.stringify({
        name: 'hello',
        desc: 'Says hello',
        nodes: [{ name: 'Answer', usr_prompt: 'Say hello to {{ ctx.input }}.\nBe brief.\n' }],
      }),
      '/h/hello.json',
    );
    expect(yaml.ok && json.ok).toBe(true);
    if (yaml.ok && json.ok) expect(yaml.hatchery.def).toEqual(json.hatchery.def);
    expect(loadHatcheryText(HELLO, '/h/hello.yml').ok).toBe(true);
  });

  it('anchors, aliases and << merge keys share settings between nodes', () => {
    const res = loadHatcheryText(
      `name: shared
desc: d
_defaults: &d { model: "openai:gpt-test", temperature: 0.2 }
nodes:
  - { name: A, <<: *d, usr_prompt: one, next: B }
  - name: B
    <<: *d
    temperature: 0.9
    usr_prompt: two
`,
      '/h/s.yaml',
    );
    expect(res.ok).toBe(true);
    if (res.ok)
      expect(res.hatchery.def.nodes).toEqual([
        { name: 'A', model: 'openai:gpt-test', temperature: 0.2, usr_prompt: 'one', next: 'B' },
        { name: 'B', model: 'openai:gpt-test', temperature: 0.9, usr_prompt: 'two' },
      ]);
  });

  it('refuses an alias bomb without expanding it', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...'bcdefghi'
        .split('')
        .map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
      'name: boom',
    ].join('\n');
    expect(errorOf(bomb)).toBe(
      '/h/a.yaml: (root): the file expands its aliases (*name) more than 100 times; this looks like an alias bomb, so it is not loaded; reuse fewer aliases, or write the repeated parts out',
    );
  });

  it('syntax errors name the line and column', () => {
    expect(errorOf('name: a\ndesc: [unclosed\nnodes: []\n')).toMatch(
      /^\/h\/a\.yaml: \(root\) \(line 3, column \d+\): invalid YAML \(near "nodes: \[\]"\): /,
    );
    expect(errorOf('name: a\ndesc: b\nname: c\nnodes: []\n')).toBe(
      '/h/a.yaml: (root) (line 3, column 1): invalid YAML (near "name: c"): duplicate key "name": a key may appear once per object; keep one',
    );
    expect(errorOf('name: a\n---\nname: b\n')).toBe(
      '/h/a.yaml: (root) (line 2, column 1): invalid YAML (near "---"): the file holds several YAML documents (---); a hatchery is one document',
    );
    expect(errorOf('# only a comment\n')).toBe(
      '/h/a.yaml: (root): the file is empty (expected a YAML mapping)',
    );
  });

  it('nesting too deep for the parser is refused before parsing, with its position', () => {
    const deep = `name: a\ndesc: ${'['.repeat(300)}${']'.repeat(300)}\n`;
    expect(errorOf(deep)).toBe(
      `/h/a.yaml: (root) (line 2, column 207): invalid YAML (near "…${'['.repeat(80)}…"): objects and arrays are nested too deeply here; a hatchery file needs far fewer levels, so flatten this value`,
    );
  });

  it('every validation problem carries the line and column of its path', () => {
    const text = `name: p
desc: d
nodes:
  - name: A
    usr_promt: hi
    next: Nowhere
  - type: toll
`;
    expect(errorOf(text).split('\n')).toEqual([
      '/h/a.yaml: nodes/0/usr_promt (line 5, column 5): unknown key "usr_promt": did you mean "usr_prompt"? (usr_prompt is required)',
      '/h/a.yaml: nodes/1/type (line 7, column 5): unknown node type "toll" (did you mean "tool"?); valid types: ai, drone, tool, baneling, script, parallel, map, loop, ask (or no type for a drone), or a YAML design type (agent.completion, trigger.stdin, event.stdout, ...)',
    ]);
  });

  it('a key reached through a merge points at the anchored mapping that holds it', () => {
    const text = `name: m
desc: d
_base: &b
  model: 7
nodes:
  - <<: *b
    usr_prompt: x
`;
    expect(errorOf(text)).toBe(
      '/h/a.yaml: nodes/0/model (line 4, column 3): must be a string, not the number 7',
    );
  });

  it('a "__proto__" key stays a key and is reported, not a prototype', () => {
    expect(errorOf('name: p\ndesc: d\ninputs:\n  __proto__: x\nnodes: [{usr_prompt: x}]\n')).toMatch(
      /^\/h\/a\.yaml: inputs\/__proto__ \(line 4, column 3\): "__proto__" is reserved: /,
    );
  });
});

describe('source positions of JSON files', () => {
  it('pretty-printed JSON: each problem at its key', () => {
    const text = JSON.stringify({ name: 'j', desc: 'd', nodes: [{ name: 'A', usr_prompt: 5 }] }, null, 2);
    expect(errorOf(text, '/h/j.json')).toBe(
      '/h/j.json: nodes/0/usr_prompt (line 7, column 7): must be a string, not the number 5',
    );
  });

  it('a key written twice in one object is an error (JSON.parse would keep the last silently)', () => {
    const text =
      '{\n  "name": "a",\n  "desc": "d",\n  "nodes": [{"usr_prompt": "x", "usr_prompt": "y"}],\n  "name": "b"\n}';
    expect(errorOf(text, '/h/d.json')).toBe(
      '/h/d.json: (root) (line 4, column 33): invalid JSON (near "  \\"nodes\\": [{\\"usr_prompt\\": \\"x\\", \\"usr_prompt\\": \\"y\\"}],"): duplicate key "usr_prompt": a key may appear once per object; keep one',
    );
    // Escapes are decoded before comparing; the same key in different objects is fine.
    expect(errorOf('{"a\\u0062": 1, "ab": 2}', '/h/d.json')).toMatch(
      /\(line 1, column 16\): invalid JSON .*: duplicate key "ab"/,
    );
    expect(
      errorOf('{"name": "x", "desc": "d", "nodes": [{"name": "A"}, {"name": "B"}]}', '/h/d.json'),
    ).not.toMatch(/duplicate/);
  });

  it('keys holding "/" are found (a path segment is not always a key)', () => {
    const problems: ValidationProblem[] = [{ path: 'nodes/0/tool_args/a/b', message: 'x' }];
    locateProblems('{"nodes": [\n {"tool_args": {"a/b": 1}}]}', problems);
    expect(problems[0]).toMatchObject({ line: 2, column: 17 });
  });

  it('warnings are located too; a problem that already has a position keeps it', () => {
    const warning: ValidationProblem = { path: 'nodes/0', message: 'w', severity: 'warning' };
    const placed: ValidationProblem = { path: 'nodes/0', message: 'p', line: 9, column: 9 };
    locateProblems('name: a\nnodes:\n  - usr_prompt: x\n', [warning, placed]);
    expect(warning).toMatchObject({ line: 3, column: 5 });
    expect(placed).toMatchObject({ line: 9, column: 9 });
  });

  it('every example in hatchery/ loads, and its YAML form (convert) loads to the same definition', async () => {
    const { jsonToYaml } = await import('../../src/cli/convert.js');
    const dir = path.join(REPO_ROOT, 'hatchery');
    for (const f of ['hello.json', 'research-team.json', 'parallel-review.json', 'triage-router.json']) {
      const text = readFileSync(path.join(dir, f), 'utf8');
      const json = loadHatcheryText(text, path.join(dir, f));
      const yaml = loadHatcheryText(
        jsonToYaml(JSON.parse(text)),
        path.join(dir, f.replace('.json', '.yaml')),
      );
      expect(json.ok && yaml.ok).toBe(true);
      if (json.ok && yaml.ok) expect(yaml.hatchery.def).toEqual(json.hatchery.def);
    }
  });
});
