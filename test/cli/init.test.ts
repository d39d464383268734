import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/http.js';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, tempDir } from '../helpers.js';
import { spawnCli, textOf } from '../mcp/helpers.js';

const QUESTION = 'What is a hatchery?';
const ANSWER =
  'A hatchery is a JSON file that describes an LLM workflow. hatchery-mcp runs it from the shell, or serves it to your AI client as an MCP tool.';
const FILES = ['hello.json', 'tests/hello.test.yaml', 'tests/cassettes/hello.jsonl', '.hatcheryignore'];

/** A loopback URL where nothing listens: a port that was free a moment ago. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}`;
}

/** The JSON blocks init printed (indented by four spaces, from "    {" to "    }"). */
function jsonBlocks(stdout: string): unknown[] {
  const blocks: unknown[] = [];
  let cur: string[] | undefined;
  for (const line of stdout.split('\n')) {
    if (line === '    {') cur = [];
    if (cur) cur.push(line.slice(4));
    if (line === '    }' && cur) {
      blocks.push(JSON.parse(cur.join('\n')));
      cur = undefined;
    }
  }
  return blocks;
}

/** Runs `hatchery-mcp init DIR` in a fresh temporary folder; returns the folder and the result. */
async function init(dirName = 'hatchery', env: Record<string, string> = {}) {
  const cwd = tempDir('hatchery-init-');
  const res = await runCli(['init', dirName], { cwd, env });
  return { cwd, dir: path.join(cwd, dirName), ...res };
}

describe('hatchery-mcp init', () => {
  it('creates the first hatchery, its test, cassette and .hatcheryignore, and validate --strict passes', async () => {
    const { cwd, dir, code, stdout } = await init();
    expect(code).toBe(0);
    for (const f of FILES) expect(existsSync(path.join(dir, f)), f).toBe(true);
    const hello = JSON.parse(readFileSync(path.join(dir, 'hello.json'), 'utf8'));
    expect(hello.name).toBe('hello');
    expect(hello.model).toBeUndefined();
    // The editor schema is this install's, by absolute URL, since the folder is outside the package.
    expect(existsSync(new URL(hello.$schema))).toBe(true);
    expect(readFileSync(path.join(dir, '.hatcheryignore'), 'utf8')).toMatch(/^tests\/$/m);
    for (const f of FILES) expect(stdout).toContain(f);
    expect(stdout).toMatch(/^ {2}4\. Check all: (hatchery-mcp|node \S+cli\.js) doctor --dir hatchery$/m);
    // Step 3 of the printed next steps works as written, from the folder init ran in.
    const step = /^ {2}3\. Test it: +(.+?) +\(replays/m.exec(stdout)![1]!;
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    expect(execFileSync('sh', ['-c', step], { cwd, env, encoding: 'utf8' })).toContain('1 passed, 0 failed');
    const validate = await runCli(['validate', '--strict', dir], { cwd });
    expect(validate.stderr).toContain('1 valid, 0 invalid');
    expect(validate.code).toBe(0);
  });

  it('its test passes offline with no key, and with only one key against a base URL where nothing listens', async () => {
    const { cwd, dir } = await init();
    const dead = await deadUrl();
    const envs: Record<string, string>[] = [
      {},
      { OPENAI_API_KEY: 'sk-test-not-a-key-0001', OPENAI_BASE_URL: `${dead}/v1` },
      { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key-0001', ANTHROPIC_BASE_URL: dead },
    ];
    for (const env of envs) {
      const res = await runCli(['test', path.join(dir, 'tests')], { cwd, env });
      expect(res.stdout, JSON.stringify(env)).toContain('1 passed, 0 failed');
      expect(res.code).toBe(0);
    }
  });

  it('prints client config blocks that parse as JSON, with absolute existing paths and no key value', async () => {
    const key = 'sk-proj-realLookingSecretValue123456';
    const { dir, stdout } = await init('hatchery', { OPENAI_API_KEY: key });
    expect(stdout).not.toContain(key);
    const [desktop, vscode, cursor] = jsonBlocks(stdout) as Record<
      string,
      Record<string, Record<string, unknown>>
    >[];
    const vs = vscode!.servers!.hatchery!;
    expect(vs.type).toBe('stdio');
    for (const entry of [desktop!.mcpServers!.hatchery!, vs, cursor!.mcpServers!.hatchery!]) {
      const { command, args, env } = entry as {
        command: string;
        args: string[];
        env: Record<string, string>;
      };
      expect(command).toBe(process.execPath);
      expect(path.isAbsolute(args[0]!) && statSync(args[0]!).isFile()).toBe(true);
      expect(args[0]).toMatch(/dist[/\\]cli\.js$/);
      expect(args.slice(1)).toEqual(['--dir', dir]);
      expect(Object.keys(env).sort()).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
    }
    expect(stdout).toContain('claude_desktop_config.json');
    expect(stdout).toContain('.vscode/mcp.json');
    expect(stdout).toContain('.cursor/mcp.json');
    expect(stdout).toMatch(/^ {4}claude mcp add hatchery -- /m);
  });

  it('quotes a folder with spaces and quotes correctly in the JSON and the shell line', async () => {
    const name = `my "odd" folder's name`;
    const { dir, code, stdout } = await init(name);
    expect(code).toBe(0);
    const [desktop] = jsonBlocks(stdout) as { mcpServers: { hatchery: { args: string[] } } }[];
    expect(desktop!.mcpServers.hatchery.args[2]).toBe(dir);
    // The shell line gives the same argv when a POSIX shell splits it.
    const line = /^ {4}(claude mcp add hatchery -- .*)$/m.exec(stdout)![1]!;
    const argv = execFileSync('sh', ['-c', line.replace(/^claude mcp add hatchery -- /, `printf '%s\\n' `)], {
      encoding: 'utf8',
    });
    expect(argv.trimEnd().split('\n')).toEqual([
      process.execPath,
      desktop!.mcpServers.hatchery.args[0],
      '--dir',
      dir,
    ]);
    const test = await runCli(['test', path.join(dir, 'tests')]);
    expect(test.code).toBe(0);
  });

  it('run again, prints the client config blocks again and says which files it kept, overwriting none', async () => {
    const { cwd, dir, stdout: first } = await init();
    writeFileSync(path.join(dir, 'hello.json'), '{"mine": true}');
    writeFileSync(path.join(dir, 'other.json'), 'keep me');
    rmSync(path.join(dir, '.hatcheryignore'));
    const again = await runCli(['init', 'hatchery'], { cwd });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    // The same client blocks as the first time, with this machine's paths.
    expect(jsonBlocks(again.stdout)).toEqual(jsonBlocks(first));
    expect(jsonBlocks(again.stdout).length).toBeGreaterThanOrEqual(3);
    expect(again.stdout).toContain('claude mcp add');
    // What it wrote (only the missing file) and what it kept, by name.
    expect(again.stdout).toContain(`Created in ${dir}:\n  .hatcheryignore\n`);
    expect(again.stdout).toContain(
      `Kept in ${dir} (already there, not overwritten; --force replaces them with init's versions):\n  hello.json\n  tests/hello.test.yaml\n  tests/cassettes/hello.jsonl\n`,
    );
    expect(readFileSync(path.join(dir, 'hello.json'), 'utf8')).toBe('{"mine": true}');
    expect(readFileSync(path.join(dir, '.hatcheryignore'), 'utf8')).toMatch(/^tests\/$/m);
    // A third run has nothing to create: everything is kept, and the blocks are printed still.
    const third = await runCli(['init', 'hatchery'], { cwd });
    expect(third.code).toBe(0);
    expect(third.stdout).not.toContain('Created in');
    expect(third.stdout).toContain('  .hatcheryignore\n');
    expect(jsonBlocks(third.stdout)).toEqual(jsonBlocks(first));
    const forced = await runCli(['init', 'hatchery', '--force'], { cwd });
    expect(forced.code).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'hello.json'), 'utf8')).name).toBe('hello');
    expect(readFileSync(path.join(dir, 'other.json'), 'utf8')).toBe('keep me');
  });

  it('refuses a DIR that is an existing file, and writes nothing', async () => {
    const cwd = tempDir('hatchery-init-');
    writeFileSync(path.join(cwd, 'taken'), 'a file');
    const res = await runCli(['init', 'taken', '--force'], { cwd });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/taken exists and is not a folder/);
    expect(readFileSync(path.join(cwd, 'taken'), 'utf8')).toBe('a file');
  });

  it('refuses a sub-folder that is a file instead of writing around it', async () => {
    const cwd = tempDir('hatchery-init-');
    mkdirSync(path.join(cwd, 'h'));
    writeFileSync(path.join(cwd, 'h', 'tests'), 'a file');
    const res = await runCli(['init', 'h'], { cwd });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('is not a folder');
    expect(existsSync(path.join(cwd, 'h', 'hello.json'))).toBe(false);
  });
  it('never writes through a link inside DIR, but accepts a DIR that is a link to a folder', async () => {
    const cwd = tempDir('hatchery-init-');
    const outside = path.join(cwd, 'outside');
    mkdirSync(outside);
    mkdirSync(path.join(cwd, 'h'));
    symlinkSync(outside, path.join(cwd, 'h', 'tests'));
    const res = await runCli(['init', 'h', '--force'], { cwd });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${path.join(cwd, 'h', 'tests')} exists and is not a folder`);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(path.join(cwd, 'h', 'hello.json'))).toBe(false);
    symlinkSync(outside, path.join(cwd, 'link'));
    const viaLink = await runCli(['init', 'link'], { cwd });
    expect(viaLink.code).toBe(0);
    expect(existsSync(path.join(outside, 'tests', 'cassettes', 'hello.jsonl'))).toBe(true);
  });
});

describe('the folder init creates, against the fake vendor servers', () => {
  const { openai, anthropic } = fakeVendors();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('its cassette is what a real recording through each vendor gives', async () => {
    const { cwd, dir } = await init();
    const shipped = readFileSync(path.join(dir, 'tests/cassettes/hello.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l));
    const vendors: { env: Record<string, string>; fake: FakeServer; vendor: string }[] = [
      { env: { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: openai.baseURL }, fake: openai, vendor: 'openai' },
      {
        env: { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: anthropic.baseURL },
        fake: anthropic,
        vendor: 'anthropic',
      },
    ];
    for (const v of vendors) {
      v.fake.enqueue({ text: ANSWER, usage: { input: 31, output: 34 } });
      const rec = path.join(cwd, `${v.vendor}.jsonl`);
      const res = await runCli(['run', path.join(dir, 'hello.json'), '--input', QUESTION, '--record', rec], {
        cwd,
        env: v.env,
      });
      expect(res.code, res.stderr).toBe(0);
      const recorded = JSON.parse(readFileSync(rec, 'utf8').trim().split('\n')[1]!);
      const mine = shipped.find((e) => e.request.vendor === v.vendor);
      expect(mine).toEqual(recorded);
    }
  });

  it('is served over stdio and answers "hello" through the SDK client', async () => {
    const { dir } = await init();
    const s = await spawnCli(dir, { env: { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: openai.baseURL } });
    cleanups.push(s.close);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('hello');
    expect(names).not.toContain('hello.test');
    const result = await s.client.callTool({ name: 'hello', arguments: { input: 'hi there' } });
    expect(textOf(result)).toBe('echo: hi there');
  });
});
