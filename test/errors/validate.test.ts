import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT, runCli, tempDir } from '../helpers.js';

/** Phrases of the validation library's own English messages: none may reach a user. */
const RAW =
  /Invalid input|expected \w+, received|received undefined|Too small|Too big|Invalid option|Invalid string|Unrecognized key|Invalid URL|Invalid key in record|Invalid element|Invalid format/;

/** Every problem line of the text output must be free of the raw phrases. */
function rawLines(text: string): string[] {
  return text.split('\n').filter((l) => RAW.test(l));
}

const BAD = `{
  "name": "bad",
  "desc": "every kind of mistake",
  "nodes": [
    { "name": "A", "usr_promt": "hi", "next": "B" },
    { "name": "B", "usr_prompt": "x", "temperature": "hot", "route": "chose", "next": 5 },
    { "name": "C", "type": "script" },
    { "name": "D", "type": "script", "cmd": "wc -l", "timeout_ms": 1.5 },
    { "name": "E", "usr_prompt": "x", "base_url": "not a url", "max_tokens": 0, "tools": [""] }
  ]
}
`;

describe('validate prints one sentence per problem, written for a person', () => {
  it('each zod issue kind as a sentence with its fix; a typo of a required key is one problem', async () => {
    const file = path.join(tempDir(), 'bad.json');
    writeFileSync(file, BAD);
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(3);
    expect(r.stdout.trimEnd().split('\n')).toEqual([
      `${file}: nodes/0/usr_promt (line 5, column 20): unknown key "usr_promt": did you mean "usr_prompt"? (usr_prompt is required)`,
      `${file}: nodes/1/temperature (line 6, column 39): must be a number from 0 to 2, not the text "hot"`,
      `${file}: nodes/1/route (line 6, column 61): must be one of "match", "choose", not the text "chose" (did you mean "choose"?)`,
      `${file}: nodes/1/next (line 6, column 79): must be a string or a list of strings, not the number 5`,
      `${file}: nodes/2/cmd (line 7, column 5): missing required key "cmd" (the program and its arguments as an argv array); add it (a list of strings)`,
      `${file}: nodes/3/cmd (line 8, column 38): must be a list of strings, not the text "wc -l"; write it as a list, e.g. ["wc", "-l"]`,
      `${file}: nodes/3/timeout_ms (line 8, column 54): must be a whole number of 1 or more, not the number 1.5`,
      `${file}: nodes/4/base_url (line 9, column 39): must be a URL such as "https://example.com/v1", not the text "not a url"`,
      `${file}: nodes/4/max_tokens (line 9, column 64): must be at least 1, not the number 0`,
      `${file}: nodes/4/tools/0 (line 9, column 91): must not be empty`,
    ]);
    expect(rawLines(r.stdout + r.stderr)).toEqual([]);
  });

  it('a missing required key alone says what the key is', async () => {
    const file = path.join(tempDir(), 'a.yaml');
    writeFileSync(file, 'name: a\ndesc: d\nnodes:\n  - name: A\n');
    const r = await runCli(['validate', file]);
    expect(r.stdout).toBe(
      `${file}: nodes/0/usr_prompt (line 4, column 5): missing required key "usr_prompt" (the user message, a Nunjucks template); add it (a string)\n`,
    );
  });

  it('an --mcp-config file: one line per problem, no raw text', async () => {
    const dir = tempDir();
    const cfg = path.join(dir, 'mcp.json');
    writeFileSync(
      cfg,
      JSON.stringify({ mcpServers: { s: { comand: 'x' }, h: { url: 5 }, 'a b': { command: 'y' } } }),
    );
    const file = path.join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify({ name: 'ok', desc: 'd', nodes: [{ usr_prompt: 'x' }] }));
    const r = await runCli(['graph', file, '--mcp-config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `error: ${cfg}: mcpServers/s/comand: unknown key "comand": did you mean "command"? (command is required)`,
      `${cfg}: mcpServers/h/url: must be a string, not the number 5`,
      `${cfg}: mcpServers/a b: the key "a b" is not allowed: a server name may contain only letters, digits, _, - and .`,
    ]);
  });

  it('a test file (*.test.yaml): a typo of a required key is one problem', async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'h.json'),
      JSON.stringify({ name: 'h', desc: 'd', nodes: [{ usr_prompt: 'x' }] }),
    );
    const file = path.join(dir, 'h.test.yaml');
    writeFileSync(
      file,
      'hatchery: h.json\ncases:\n  - name: one\n    expct: { contains: x }\n    input: 5\n',
    );
    const r = await runCli(['test', file]);
    expect(r.code).toBe(3);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `${file}: cases/0/expct (line 4, column 12): unknown key "expct": did you mean "expect"? (expect is required)`,
      `${file}: cases/0/input (line 5, column 12): must be a string, not the number 5`,
    ]);
  });
});

/** Mistakes of every shape: each key of each node replaced by a value of every JSON type, or removed. */
function mutations(def: Record<string, unknown>): unknown[] {
  const values: unknown[] = [5, 1.5, -1, 0, 'x', '', [], [5], {}, { a: 1 }, null, true];
  const out: unknown[] = [];
  for (const key of Object.keys(def)) {
    const { [key]: _gone, ...rest } = def;
    out.push(rest);
    for (const v of values) out.push({ ...def, [key]: v });
  }
  const nodes = Array.isArray(def.nodes) ? (def.nodes as Record<string, unknown>[]) : [];
  nodes.forEach((node, i) => {
    const at = (n: unknown) => ({ ...def, nodes: nodes.map((m, j) => (j === i ? n : m)) });
    for (const key of Object.keys(node)) {
      const { [key]: _gone, ...rest } = node;
      out.push(at(rest));
      out.push(at({ ...rest, [`${key}x`]: node[key] }));
      for (const v of values) out.push(at({ ...node, [key]: v }));
    }
  });
  return out;
}

describe('sweep: no raw validation text for any file', () => {
  it('every fixture and example, and thousands of broken variants of the examples', async () => {
    const dir = tempDir();
    const sources = [path.join(REPO_ROOT, 'hatchery'), path.join(REPO_ROOT, 'test', 'fixtures')];
    let n = 0;
    for (const src of sources) {
      for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
        if (!e.isFile() || !/\.(json|ya?ml)$/.test(e.name)) continue;
        const text = readFileSync(path.join(e.parentPath, e.name), 'utf8');
        const ext = path.extname(e.name);
        writeFileSync(path.join(dir, `f${n++}${ext}`), text);
        if (ext !== '.json') continue;
        let def: unknown;
        try {
          def = JSON.parse(text);
        } catch {
          continue;
        }
        if (!def || typeof def !== 'object' || !('nodes' in def)) continue;
        const sub = path.join(dir, `m${n}`);
        mkdirSync(sub);
        mutations(def as Record<string, unknown>).forEach((m, i) => {
          writeFileSync(path.join(sub, `${i}.json`), JSON.stringify(m, null, 2));
        });
      }
    }
    const r = await runCli(['validate', '--json', dir]);
    expect(r.stdout.length).toBeGreaterThan(1000);
    expect(rawLines(r.stdout + r.stderr)).toEqual([]);
  }, 120_000);
});

describe('sweep: no raw validation text for any test file', () => {
  it('broken variants of every example test file (top-level keys, case keys, expect keys)', async () => {
    const dir = tempDir();
    const src = path.join(REPO_ROOT, 'hatchery', 'tests');
    let n = 0;
    for (const name of readdirSync(src).filter((f) => f.endsWith('.test.yaml'))) {
      const def = parse(readFileSync(path.join(src, name), 'utf8')) as Record<string, unknown>;
      const variants = mutations({ ...def, nodes: [] });
      const cases = Array.isArray(def.cases) ? (def.cases as Record<string, unknown>[]) : [];
      const first = cases[0] ?? {};
      const expectations = (first.expect ?? {}) as Record<string, unknown>;
      const withCase = (c: unknown) => ({ ...def, cases: [c] });
      for (const m of mutations({ ...first, nodes: [expectations] })) {
        const { nodes, ...c } = m as Record<string, unknown>;
        variants.push(withCase(Array.isArray(nodes) && nodes.length ? { ...c, expect: nodes[0] } : c));
      }
      for (const v of variants) {
        const { nodes: _n, ...file } = v as Record<string, unknown>;
        writeFileSync(path.join(dir, `t${n++}.test.yaml`), JSON.stringify(file, null, 2));
      }
    }
    expect(n).toBeGreaterThan(500);
    const r = await runCli(['test', dir], { env: { PATH: process.env.PATH ?? '' } });
    expect(r.code).toBe(3);
    expect(r.stderr.split('\n').length).toBeGreaterThan(300);
    expect(rawLines(r.stdout + r.stderr)).toEqual([]);
  }, 120_000);
});

describe('a node without "type" whose keys belong to another kind', () => {
  it('is one problem naming the type to add', async () => {
    const file = path.join(tempDir(), 'k.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'k',
        desc: 'd',
        nodes: [
          { name: 'M', items: 'x', node: 'A' },
          { name: 'A', cmd: ['ls'] },
        ],
      }),
    );
    const r = await runCli(['validate', file]);
    expect(r.stdout.trimEnd().split('\n')).toEqual([
      `${file}: nodes/0 (line 1, column 33): this node has no "type", so it is a drone, but "items", "node" are keys of a map node; add "type": "map"`,
      `${file}: nodes/1 (line 1, column 69): this node has no "type", so it is a drone, but "cmd" is a key of a script node; add "type": "script"`,
    ]);
  });
});
