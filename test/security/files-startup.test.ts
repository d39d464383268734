/**
 * Issue 36, "code planted through files the server loads": a run's write_file (a prompt-injected
 * model) could rewrite the --mcp-config file, a module a js: module imports, anything in
 * node_modules, a package.json or a .env file; the planted code ran on the next start, doctor or
 * validate --connect. The built CLI runs a drone whose fake model tries each, and each write is
 * refused with the rule named, the file unchanged.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import type { WireBody } from '../fakes/http.js';
import { runCli, tempDir } from '../helpers.js';
import { spawnCli, textOf } from '../mcp/helpers.js';

const fake = new FakeOpenAI();
beforeAll(async () => {
  await fake.start();
});
afterAll(() => fake.close());

const ORIGINAL = 'original\n';
const PLANTED = 'process.env.PLANTED = "yes";\n';

/** Writes `text` at `rel` below `dir`, making folders. */
function put(dir: string, rel: string, text: string): string {
  const file = path.join(dir, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/**
 * A project folder (the working folder, so a write root): `flows/plant.json`, a drone offering
 * write_file and a js: tool whose module imports a helper that imports another; a config folder with
 * the MCP config and the prices; node_modules, a nested package.json, .env.local, and `nm-link`, a
 * symlinked folder leading into node_modules.
 */
function project() {
  const cwd = tempDir('files-startup-');
  put(
    cwd,
    'flows/plant.json',
    JSON.stringify({
      name: 'plant',
      desc: 'takes notes',
      model: 'openai:gpt-test',
      nodes: [
        { name: 'Write', usr_prompt: '{{ ctx.input }}', tools: ['write_file', 'js:../lib/tool.mjs#hello'] },
      ],
    }),
  );
  put(
    cwd,
    'lib/tool.mjs',
    "import { helper } from './helper.mjs';\nexport function hello() { return helper(); }\nexport const helloSchema = { type: 'object', properties: {} };\n",
  );
  put(cwd, 'lib/helper.mjs', "export { helper } from './deep/more.mjs';\n");
  put(cwd, 'lib/deep/more.mjs', "export function helper() { return 'hi'; }\n");
  put(cwd, 'config/mcp.json', JSON.stringify({ mcpServers: {} }));
  put(cwd, 'config/prices.json', JSON.stringify({ 'openai:gpt-test': { input: 1, output: 2 } }));
  for (const rel of ['node_modules/x/index.js', 'sub/package.json', '.env.local']) put(cwd, rel, ORIGINAL);
  symlinkSync(path.join(cwd, 'node_modules'), path.join(cwd, 'nm-link'));
  symlinkSync(path.join(cwd, 'config'), path.join(cwd, 'cfg-link'));
  return cwd;
}

/** Queues one model turn calling write_file on every path, then a reply listing the tool answers. */
function plantEach(paths: readonly string[]): void {
  fake.enqueue(
    {
      toolCalls: paths.map((p, i) => ({
        id: `w${i}`,
        name: 'write_file',
        args: { path: p, content: PLANTED },
      })),
    },
    (body: WireBody) => {
      const answers = (body.messages as { role: string; tool_call_id?: string; content?: unknown }[])
        .filter((m) => m.role === 'tool')
        .map((m) => [m.tool_call_id, String(m.content)]);
      return { text: JSON.stringify(Object.fromEntries(answers)) };
    },
  );
}

describe('runs never plant code in what the server loads', () => {
  it('write_file on each protected file is refused naming the rule, and the file is unchanged', async () => {
    const cwd = project();
    // Paths are relative to the hatchery's folder (flows).
    const attempts: [string, string, RegExp][] = [
      [
        '../config/mcp.json',
        'config/mcp.json',
        /files given on the command line are protected: .*--mcp-config/,
      ],
      [
        '../config/prices.json',
        'config/prices.json',
        /files given on the command line are protected: .*--prices/,
      ],
      ['../cfg-link/mcp.json', 'config/mcp.json', /files given on the command line are protected/],
      ['../lib/helper.mjs', 'lib/helper.mjs', /modules imported by a js: module are protected: .*tool\.mjs/],
      ['../lib/deep/more.mjs', 'lib/deep/more.mjs', /modules imported by a js: module are protected/],
      ['../lib/tool.mjs', 'lib/tool.mjs', /a file a loaded hatchery depends on/],
      ['../node_modules/x/index.js', 'node_modules/x/index.js', /node_modules is protected/],
      ['../a/node_modules/y.js', 'a/node_modules/y.js', /node_modules is protected/],
      ['../nm-link/x/index.js', 'node_modules/x/index.js', /node_modules is protected/],
      ['../sub/package.json', 'sub/package.json', /package\.json is protected/],
      ['../sub/Package.JSON', 'sub/Package.JSON', /package\.json is protected/],
      ['../.env.local', '.env.local', /\.env files are protected/],
      ['../.env', '.env', /\.env files are protected/],
    ];
    const before = new Map(
      attempts.map(([, rel]) => [
        rel,
        existsSync(path.join(cwd, rel)) ? readFileSync(path.join(cwd, rel), 'utf8') : undefined,
      ]),
    );
    plantEach([...attempts.map(([p]) => p), '../notes.txt']);
    const res = await runCli(
      [
        'run',
        'flows/plant.json',
        '-q',
        '--input',
        'plant',
        '--mcp-config',
        'cfg-link/../config/mcp.json',
        '--prices',
        'config/prices.json',
      ],
      { cwd, env: { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: `${fake.url}/v1` } },
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const answers = JSON.parse(res.stdout) as Record<string, string>;
    attempts.forEach(([p, rel, rule], i) => {
      const answer = answers[`w${i}`];
      expect(answer, p).toContain(`cannot write "${p}"`);
      expect(answer, p).toMatch(rule);
      const now = existsSync(path.join(cwd, rel)) ? readFileSync(path.join(cwd, rel), 'utf8') : undefined;
      expect(now, p).toBe(before.get(rel));
    });
    // The same run could write elsewhere: the refusals are the rules, not a broken setup.
    expect(answers[`w${attempts.length}`]).toMatch(/^wrote \d+ bytes to \.\.\/notes\.txt$/);
    expect(readFileSync(path.join(cwd, 'notes.txt'), 'utf8')).toBe(PLANTED);
  });

  it('write_output into node_modules, a package.json or a .env file is refused naming the rule', async () => {
    const cwd = project();
    for (const [target, rule] of [
      ['../node_modules/x/index.js', 'node_modules is protected'],
      ['../package.json', 'package.json is protected'],
      ['../.env', '.env files are protected'],
    ] as const) {
      put(
        cwd,
        'flows/log.json',
        JSON.stringify({
          name: 'log',
          desc: 'd',
          nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: PLANTED }, write_output: target }],
        }),
      );
      const before = existsSync(path.join(cwd, 'flows', target))
        ? readFileSync(path.join(cwd, 'flows', target), 'utf8')
        : undefined;
      const res = await runCli(['run', 'flows/log.json', '-q'], { cwd });
      // A constant path: refused when the file loads (exit 3), before anything runs.
      expect(res.code, target).toBe(3);
      expect(res.stderr, target).toContain(`cannot write "${target}"`);
      expect(res.stderr, target).toContain(rule);
      const now = existsSync(path.join(cwd, 'flows', target))
        ? readFileSync(path.join(cwd, 'flows', target), 'utf8')
        : undefined;
      expect(now, target).toBe(before);
    }
  });

  it('a server started with --mcp-config refuses a served run rewriting it or a js: import', async () => {
    const cwd = project();
    const served = path.join(cwd, 'flows');
    const config = path.join(cwd, 'config', 'mcp.json');
    const targets = [config, path.join(cwd, 'lib', 'deep', 'more.mjs'), path.join(cwd, 'lib', 'planned.mjs')];
    // A module may import a file that does not exist yet: a run must not be the one to create it.
    put(
      cwd,
      'lib/deep/more.mjs',
      "export function helper() { return 'hi'; }\nexport const later = () => import('../planned.mjs');\n",
    );
    const before = targets.map((t) => (existsSync(t) ? readFileSync(t, 'utf8') : undefined));
    plantEach(targets);
    const server = await spawnCli(served, {
      args: ['--mcp-config', config, '--allow-write', cwd],
      env: { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: `${fake.url}/v1` },
    });
    try {
      const res = await server.client.callTool({ name: 'plant', arguments: { input: 'plant' } });
      expect(res.isError, textOf(res)).toBeFalsy();
      const answers = JSON.parse(textOf(res)) as Record<string, string>;
      expect(answers.w0).toMatch(/files given on the command line are protected: .*--mcp-config/);
      expect(answers.w1).toMatch(/modules imported by a js: module are protected: .*tool\.mjs/);
      expect(answers.w2).toMatch(/modules imported by a js: module are protected/);
      expect(targets.map((t) => (existsSync(t) ? readFileSync(t, 'utf8') : undefined))).toEqual(before);
    } finally {
      await server.close();
    }
  });
});
