/** `hatchery-mcp test`: test files, expectations, the per-case lines, the final line and exit codes. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, tempDir } from '../helpers.js';

const { openai } = fakeVendors();
const OFFLINE = { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' };
let dir: string;

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A planner with structured output, then an echo: deterministic output for JSON checks. */
const plan = {
  name: 'plan',
  desc: 'Plans',
  model: 'openai:gpt-test',
  nodes: [
    {
      name: 'Plan',
      usr_prompt: 'Plan {{ ctx.input }} for {{ ctx.who }}',
      output_schema: {
        type: 'object',
        properties: { title: { type: 'string' }, steps: { type: 'array', items: { type: 'string' } } },
        required: ['title', 'steps'],
      },
      next: 'Done',
    },
    { name: 'Done', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ out.Plan | dump }}' } },
  ],
  inputs: { who: 'For whom?' },
};

beforeEach(async () => {
  dir = tempDir('hatchery-testcmd-');
  write('plan.json', JSON.stringify(plan));
  openai.reset();
  openai.enqueue(JSON.stringify({ title: 'Picnic', steps: ['bread', 'cheese'] }));
  const rec = await runCli(
    [
      'run',
      'plan.json',
      '--input',
      'a picnic',
      '--set',
      'who=Ada',
      '--record',
      'tests/cassettes/plan.jsonl',
      '-q',
    ],
    { cwd: dir, env: { OPENAI_API_KEY: 'sk-test-123456789', OPENAI_BASE_URL: openai.baseURL } },
  );
  expect(rec.code).toBe(0);
});

describe('hatchery-mcp test', () => {
  it('passes every kind of expectation, from the cassette, with no key and no network', async () => {
    write(
      'tests/plan.test.yaml',
      `hatchery: ../plan.json
cassette: cassettes/plan.jsonl
cases:
  - name: plans a picnic
    input: a picnic
    vars: { who: Ada }
    expect:
      equals: '{"title":"Picnic","steps":["bread","cheese"]}'
      contains: [Picnic, bread]
      not_contains: pasta
      regex: '"steps":\\[.*cheese'
      json:
        - { path: $.title, equals: Picnic }
        - { path: 'steps[1]', equals: cheese }
        - { path: $.steps, equals: [bread, cheese] }
      schema:
        type: object
        required: [title]
        properties: { title: { type: string } }
      nodes: [Plan, Done]
      max_tokens: 500
`,
    );
    const r = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^tests\/plan\.test\.yaml\n {2}✓ plans a picnic \(\d+ ms\)\n1 passed, 0 failed\n$/,
    );
  });

  it('a failing expectation prints what differed and exits 1', async () => {
    write(
      'tests/plan.test.yaml',
      `hatchery: ../plan.json
cassette: cassettes/plan.jsonl
cases:
  - name: right
    input: a picnic
    vars: { who: Ada }
    expect: { contains: Picnic }
  - name: wrong
    input: a picnic
    vars: { who: Ada }
    expect:
      contains: pasta
      json: [{ path: '$.steps[0]', equals: wine }, { path: $.budget, equals: 10 }]
      schema: { type: object, properties: { title: { type: number } } }
      nodes: [Plan]
      max_tokens: 1
`,
    );
    const r = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(r.code).toBe(1);
    const out = r.stdout.replace(/\(\d+ ms\)/g, '(T ms)');
    expect(out).toMatch(/ {2}✓ right \(T ms\)\n {2}✗ wrong \(T ms\)\n/);
    const tokens = /tokens: used (\d+), more than max_tokens 1/.exec(out);
    expect(tokens).not.toBeNull();
    expect(out).toContain(
      `      nodes: expected [Plan], ran [Plan, Done]
${tokens![0].replace(/^/, '      ')}
      contains: "pasta" not found in "{\\"title\\":\\"Picnic\\",\\"steps\\":[\\"bread\\",\\"cheese\\"]}"
      json $.steps[0]: expected "wine", got "\\"bread\\""
      json $.budget: $ has no key "budget"
      schema: title: must be a number, not the text "Picnic"
1 passed, 1 failed
`,
    );
  });

  it('a replay miss fails the case with the node and the diff', async () => {
    write(
      'tests/plan.test.yaml',
      `hatchery: ../plan.json
cassette: cassettes/plan.jsonl
cases:
  - name: another person
    input: a picnic
    vars: { who: Grace }
    expect: { contains: Picnic }
`,
    );
    const r = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✗ another person');
    expect(r.stdout).toContain('the run failed:');
    expect(r.stdout).toContain('no recorded answer for this model call of node "Plan"');
    expect(r.stdout).toContain(
      `-       "content": "Plan a picnic for Ada",\n      +       "content": "Plan a picnic for Grace",`,
    );
    expect(r.stdout).toMatch(/0 passed, 1 failed\n$/);
  });

  it('an invalid test file exits 3, listing every problem with its path, line and column', async () => {
    const file = write(
      'tests/bad.test.yaml',
      `hatchery: ../missing.json
cases:
  - name: one
    expct: { contains: x }
  - name: two
    expect:
      regex: "("
      max_tokens: -1
      json: [{ equals: 1 }]
`,
    );
    const r = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `${file}: cases/0/expct (line 4, column 12): unknown key "expct": did you mean "expect"? (expect is required)`,
      `${file}: cases/1/expect/regex (line 7, column 14): not a valid regular expression: Invalid regular expression: /(/: Unterminated group`,
      `${file}: cases/1/expect/max_tokens (line 8, column 19): must be at least 0, not the number -1`,
      `${file}: cases/1/expect/json/0/path (line 9, column 14): missing required key "path"; add it (a string)`,
    ]);
  });

  it('names a hatchery or cassette that does not exist (exit 3), and a YAML syntax error with its line', async () => {
    const file = write(
      'tests/paths.test.yaml',
      'hatchery: ../nope.json\ncassette: cassettes/nope.jsonl\ncases:\n  - { name: a, expect: { contains: x } }\n',
    );
    const broken = write('tests/broken.test.yaml', 'hatchery: ../plan.json\ncases: [\n');
    const r = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      `${file}: hatchery (line 1, column 11): no such file: ${path.join(dir, 'nope.json')}`,
    );
    expect(r.stderr).toContain(
      `${file}: cassette (line 2, column 11): no such cassette: ${path.join(dir, 'tests/cassettes/nope.jsonl')}; record it with run --record`,
    );
    expect(r.stderr).toContain(
      `${broken}: (root) (line 3, column 1): Flow sequence in block collection must be sufficiently indented and end with a ]\n`,
    );
  });

  it('reads *.test.json files too, and runs one file named on the command line', async () => {
    const json = {
      hatchery: '../plan.json',
      cases: [
        {
          name: 'as JSON',
          input: 'a picnic',
          vars: { who: 'Ada' },
          cassette: 'cassettes/plan.jsonl',
          expect: { json: [{ path: '$.steps', equals: ['bread', 'cheese'] }] },
        },
      ],
    };
    write('tests/plan.test.json', JSON.stringify(json, null, '\t'));
    const r = await runCli(['test', 'tests/plan.test.json'], { cwd: dir, env: OFFLINE });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^tests\/plan\.test\.json\n {2}✓ as JSON \(\d+ ms\)\n1 passed, 0 failed\n$/);
  });

  it('exits 2 when there is nothing to test', async () => {
    const none = await runCli(['test', 'missing-folder'], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no such file or folder: missing-folder');
    mkdirSync(path.join(dir, 'empty'));
    const empty = await runCli(['test', 'empty'], { cwd: dir });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no test files (*.test.yaml, *.test.json) under empty');
  });

  it('an expected error passes when the run fails with it', async () => {
    write(
      'tests/plan.test.yaml',
      `hatchery: ../plan.json
cassette: cassettes/plan.jsonl
cases:
  - name: needs who
    input: a picnic
    expect: { error: who }
`,
    );
    const r = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(r.stdout).toContain('✓ needs who');
    expect(r.code).toBe(0);
  });
});

describe('hatchery-mcp test --record-missing', () => {
  it('records the calls a case lacks into its cassette, then the case passes offline', async () => {
    write(
      'tests/plan.test.yaml',
      `hatchery: ../plan.json
cassette: cassettes/plan.jsonl
cases:
  - name: for Ada (recorded)
    input: a picnic
    vars: { who: Ada }
    expect: { json: [{ path: $.title, equals: Picnic }] }
  - name: for Grace (missing)
    input: a picnic
    vars: { who: Grace }
    expect: { json: [{ path: $.title, equals: Tea }] }
`,
    );
    openai.reset();
    openai.enqueue(JSON.stringify({ title: 'Tea', steps: ['kettle'] }));
    const fill = await runCli(['test', 'tests', '--record-missing'], {
      cwd: dir,
      env: { OPENAI_API_KEY: 'sk-test-123456789', OPENAI_BASE_URL: openai.baseURL },
    });
    expect(fill.stdout).toMatch(/2 passed, 0 failed\n$/);
    expect(openai.requests).toHaveLength(1);
    const offline = await runCli(['test', 'tests'], { cwd: dir, env: OFFLINE });
    expect(offline.code).toBe(0);
    expect(offline.stdout).toMatch(/2 passed, 0 failed\n$/);
  });
});
