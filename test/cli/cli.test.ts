import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { findHatcheryFiles } from '../../src/loader/load.js';
import { fakeVendors } from '../fakes/vendors.js';
import { CLI_PATH, REPO_ROOT, runCli, TEST_STATE, tempDir } from '../helpers.js';

const cli = runCli;

describe('hatchery-mcp run (as a process)', () => {
  it('runs the keyless example: output on stdout, one line per node on stderr', async () => {
    const r = await cli(['run', 'hatchery/read-notes.json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^# welcome\.md\n\nWelcome to hatchery-mcp\./);
    expect(r.stdout).toMatch(/\(\d+ words\)\n$/);
    expect(r.stderr).toMatch(/\[1\] Read \(/);
    expect(r.stderr).toMatch(/\[2\] Format \(/);
  });

  it('reads the input from stdin when piped, and from --input', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'shout.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'shout',
        desc: 'upper-cases its input',
        inputs: { mark: 'Punctuation to add' },
        nodes: [
          { type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input | upper }}{{ ctx.mark }}' } },
        ],
      }),
    );
    const [piped, flag, missing] = await Promise.all([
      cli(['run', file, '--set', 'mark=!', '-q'], { stdin: 'hello there\n' }),
      cli(['run', file, '--input', 'hi', '--set', 'mark=?', '--json']),
      cli(['run', file, '--input', 'hi']),
    ]);
    expect(piped).toMatchObject({ code: 0, stdout: 'HELLO THERE!\n', stderr: '' });
    expect(JSON.parse(flag.stdout)).toMatchObject({ output: 'HI?', steps: 1 });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('missing input: mark (Punctuation to add); pass --set mark=...');
  });

  // `script` (util-linux, on every Debian) gives the CLI a real terminal, as a person running it has.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(!hasScript)('asks for missing declared inputs on a terminal', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'ask.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'ask',
        desc: 'asks for a topic',
        inputs: { topic: 'What topic?' },
        nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'topic={{ ctx.topic }}' } }],
      }),
    );
    const child = spawn('script', ['-qec', `${process.execPath} ${CLI_PATH} run ${file} -q`, '/dev/null'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TERM: 'dumb',
        HATCHERY_STATE: TEST_STATE,
      },
    });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
      if (out.includes('What topic?: ') && !out.includes('cats')) child.stdin.write('cats\n');
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toContain('What topic?: ');
    expect(out).toContain('topic=cats');
  });

  it('fails with exit 1 and a message naming file, node and field when a run fails', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'bad',
        desc: 'reads outside its folder',
        nodes: [
          { name: 'Sneak', type: 'tool', tool_name: 'read_file', tool_args: { path: '../../etc/passwd' } },
        ],
      }),
    );
    const r = await cli(['run', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`]: ${file}: node "Sneak"`);
    expect(r.stderr).toContain('path "../../etc/passwd"');
    expect(r.stdout).toBe('');
  });

  it('stops a cycle with --max-steps', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'loop.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'loop',
        desc: 'never ends',
        // The output always names Again, so the way out to END is never taken.
        nodes: [
          {
            name: 'Again',
            type: 'tool',
            tool_name: 'echo',
            tool_args: { text: 'Again' },
            next: ['Again', 'END'],
          },
        ],
      }),
    );
    const r = await cli(['run', file, '--max-steps', '4', '-q']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('max_steps (4)');
  });

  it('reports an invalid file with exit 3 and every problem', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'invalid.json');
    writeFileSync(file, JSON.stringify({ name: 'x', nodes: [{ usr_promt: 'hi' }] }));
    const r = await cli(['run', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${file}: desc (line 1, column 1): `);
    expect(r.stderr).toContain(
      `${file}: nodes/0/usr_promt (line 1, column 23): unknown key "usr_promt": did you mean "usr_prompt"? (usr_prompt is required)`,
    );
  });

  it('refuses bad command lines with exit 2', async () => {
    const [none, bad, bogus, unknown, nofile] = await Promise.all([
      cli(['run']),
      cli(['run', 'hatchery/read-notes.json', '--max-steps', 'many']),
      cli(['run', 'hatchery/read-notes.json', '--bogus']),
      cli(['frobnicate']),
      cli(['run', 'nope.json']),
    ]);
    expect(none.code).toBe(2);
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--max-steps must be a positive integer'),
    });
    expect(bogus.code).toBe(2);
    expect(unknown.code).toBe(2);
    expect(nofile.code).toBe(1);
    expect(nofile.stderr).toContain('nope.json: cannot read hatchery file: no such file');
  });
});

describe('hatchery-mcp validate, help and version', () => {
  it('validates the shipped examples', async () => {
    const r = await cli(['validate', 'hatchery']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('hatchery/read-notes.json: ok (read_notes, 2 nodes)');
  });

  it('prints every problem of every broken file as file: json/path: message', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), '{ "name": "a", ');
    writeFileSync(
      path.join(dir, 'b.json'),
      JSON.stringify({
        name: 'b',
        desc: 'd',
        nodes: [{ name: 'X', usr_prompt: 'hi', next: 'Y' }, { type: 'toll' }],
      }),
    );
    writeFileSync(
      path.join(dir, 'c.json'),
      JSON.stringify({ name: 'c', desc: 'fine', nodes: [{ usr_prompt: 'ok' }] }),
    );
    const r = await cli(['validate', dir]);
    expect(r.code).toBe(3);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toContain(
      `${path.join(dir, 'b.json')}: nodes/0/next (line 1, column 63): no node named "Y"; nodes: X, node_2`,
    );
    expect(
      lines.some((l) =>
        l.startsWith(
          `${path.join(dir, 'b.json')}: nodes/1/type (line 1, column 76): unknown node type "toll" (did you mean "tool"?); valid types: ai, drone, tool`,
        ),
      ),
    ).toBe(true);
    expect(
      lines.some((l) =>
        l.startsWith(`${path.join(dir, 'a.json')}: (root) (line 1, column 16): invalid JSON`),
      ),
    ).toBe(true);
    expect(lines).toContain(`${path.join(dir, 'c.json')}: ok (c, 1 node)`);
    expect(r.stderr).toContain('1 valid, 2 invalid');
  });

  it('has --help for every command and --version', async () => {
    const helps = [
      ['--help'],
      ['run', '--help'],
      ['validate', '--help'],
      ['serve', '--help'],
      ['help', 'run'],
    ];
    for (const r of await Promise.all(helps.map((args) => cli(args)))) {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Usage/);
    }
    const v = await cli(['--version']);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('hatchery-mcp run on every example, against the fake model servers', () => {
  const { openai, anthropic } = fakeVendors();
  const args: Record<string, string[]> = {
    'story-chain.json': ['--set', 'topic=a lighthouse keeper'],
    'triage-router.json': ['--input', 'I found a Bug in the export button'],
    'unique-lines.json': ['--input', 'b\na\nb'],
    'read-notes.json': ['--input', 'welcome.md'],
  };

  let env: Record<string, string>;
  /** Every example, run once (all at once) for the tests below: file name -> result. */
  let runs: Map<string, Awaited<ReturnType<typeof cli>>>;
  beforeAll(async () => {
    env = {
      OPENAI_API_KEY: 'sk-test-never-printed',
      OPENAI_BASE_URL: openai.baseURL,
      ANTHROPIC_API_KEY: 'sk-ant-test-never-printed',
      ANTHROPIC_BASE_URL: anthropic.baseURL,
    };
    const files = (await findHatcheryFiles(path.join(REPO_ROOT, 'hatchery'))).map((f) => path.basename(f));
    const results = await Promise.all(
      files.map((f) => cli(['run', `hatchery/${f}`, ...(args[f] ?? ['--input', 'What is MCP?'])], { env })),
    );
    runs = new Map(files.map((f, i) => [f, results[i]!]));
  });

  it('covers every example in hatchery/', () => {
    expect(runs.size).toBeGreaterThanOrEqual(4);
    for (const [f, r] of runs) {
      expect({ file: f, code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({
        file: f,
        code: 0,
        stderr: '',
      });
      expect(r.stdout.trim().length).toBeGreaterThan(0);
      expect(r.stdout + r.stderr).not.toContain('never-printed');
    }
  });

  it('follows the router to the node named in the model output', () => {
    const r = runs.get('triage-router.json')!;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\[2\] Bug /);
    expect(r.stdout).toContain('Draft a reply to this bug report');
  });

  it('runs a drone on Anthropic when its model says so, and counts tokens', async () => {
    const r = await cli(['run', 'hatchery/hello.json', '--input', 'hi', '--json'], {
      env: { ...env, HATCHERY_MODEL: 'anthropic:claude-test' },
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { output: string; usage: { inputTokens: number } };
    expect(out.output).toContain('hi');
    expect(out.usage.inputTokens).toBeGreaterThan(0);
    expect(anthropic.requests.at(-1)?.body).toMatchObject({ model: 'claude-test' });
  });

  it('fails clearly, naming the variable and the node, when the key is missing', async () => {
    const r = await cli(['run', 'hatchery/hello.json', '--input', 'hi'], {
      env: { OPENAI_BASE_URL: openai.baseURL, HATCHERY_MODEL: 'openai:gpt-test' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('node "Answer"');
    expect(r.stderr).toContain('needs OPENAI_API_KEY');
  });
});
