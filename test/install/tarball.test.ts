/**
 * The README's install paths, done as a user does them, from folders outside the repository: pack the
 * package, install the tarball into a scratch global prefix, and use the installed `hatchery-mcp`
 * (version, `run`, and an MCP client over stdio); install from the clone the same way. One pack and
 * one install serve the whole file: they take seconds each.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { REPO_ROOT, tempDir } from '../helpers.js';
import { textOf } from '../mcp/helpers.js';
import { npm, npmWarnings, shellEnv } from './docs.js';

const VERSION = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const INSTALL_TIMEOUT = 180_000;
/** Offline when the cache holds everything (it does after `npm ci`); the registry otherwise, nothing else. */
const INSTALL_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline'];

/** The server entries (`command` + `args` with `--dir`) inside the JSON objects of a text, in order. */
function serverEntries(text: string): { command: string; args: string[] }[] {
  const found: { command: string; args: string[] }[] = [];
  const visit = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    const o = v as { command?: unknown; args?: unknown };
    if (typeof o.command === 'string' && Array.isArray(o.args) && o.args.includes('--dir')) {
      found.push({ command: o.command, args: o.args as string[] });
    }
    for (const child of Object.values(v)) visit(child);
  };
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) {
    // The longest balanced JSON object starting here, if any (strings may hold braces).
    let depth = 0;
    let inString = false;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          visit(JSON.parse(text.slice(i, j + 1)));
          i = j;
        } catch {
          // not JSON: go on from the next brace
        }
        break;
      }
    }
  }
  return found;
}

/** Runs a program with an empty stdin; resolves with its exit code and both streams (never rejects on a non-zero exit). */
function run(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { cwd, env: { ...shellEnv(), ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    // Nothing piped in (`run` reads a piped stdin as its input and would wait for its end).
    child.stdin?.end();
  });
}

describe('installed from the packed tarball, used outside the repository', () => {
  const tmp = tempDir('hatchery-install-');
  const prefix = path.join(tmp, 'prefix');
  const bin = path.join(prefix, 'bin', 'hatchery-mcp');
  const pkgDir = path.join(prefix, 'lib', 'node_modules', 'hatchery-mcp');
  /** The user's project folder: nowhere near the repository. */
  const work = path.join(tmp, 'my-project');
  const tools = path.join(work, 'tools');
  let tarball: string;
  let installOutput: string;
  /** Another project that depends on hatchery-mcp (installed from the same tarball). */
  const project = path.join(tmp, 'other-project');
  let projectInstallOutput: string;
  /** Wall time of `npm pack` plus the tarball install, for the newcomer's total below. */
  let installMs = 0;

  beforeAll(async () => {
    mkdirSync(path.join(tmp, 'pack'));
    mkdirSync(work);
    // The README's `npm pack`. dist/ is built already (npm test, the global setup); prepack's build is
    // skipped here because it rewrites schema/ while other test files read it.
    const pack = await npm(
      ['pack', '--pack-destination', path.join(tmp, 'pack'), '--ignore-scripts'],
      REPO_ROOT,
    );
    tarball = path.join(tmp, 'pack', `hatchery-mcp-${VERSION}.tgz`);
    // The README's `npm install -g ./hatchery-mcp-X.tgz`, into a scratch prefix, from another folder;
    // at the same time, into another project as a dependency (the library use of the README).
    mkdirSync(project);
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'other-project', version: '1.0.0', private: true, type: 'module' }),
    );
    const [install, local] = await Promise.all([
      npm(['install', '-g', '--prefix', prefix, ...INSTALL_FLAGS, tarball], work),
      npm(['install', ...INSTALL_FLAGS, tarball], project),
    ]);
    installOutput = `${install.stdout}\n${install.stderr}`;
    projectInstallOutput = `${local.stdout}\n${local.stderr}`;
    installMs = pack.ms + install.ms;
    process.stderr.write(
      `install test: npm pack ${Math.round(pack.ms)} ms, npm install -g of the tarball ${Math.round(install.ms)} ms\n`,
    );
    // A no-key example copied out of the installed package, as a user would start.
    mkdirSync(tools);
    cpSync(path.join(pkgDir, 'hatchery', 'read-notes.json'), path.join(tools, 'read-notes.json'));
    cpSync(path.join(pkgDir, 'hatchery', 'notes'), path.join(tools, 'notes'), { recursive: true });
  }, INSTALL_TIMEOUT);
  // Two installed dependency trees: deleting them takes tens of seconds on a slow disk, so it is done
  // without blocking and under the install's own time limit (a hook's default is 30 s).
  afterAll(() => rm(tmp, { recursive: true, force: true }), INSTALL_TIMEOUT);

  it('installs into another project without warnings; its bin and both exports work there', async () => {
    expect(npmWarnings(projectInstallOutput)).toEqual([]);
    expect(projectInstallOutput).toMatch(/added \d+ packages?/);
    // npx finds the project's own bin: no registry lookup (the package is not published).
    const version = await run('npx', ['--no-install', 'hatchery-mcp', '--version'], project);
    expect(version.stdout.trim(), version.stderr).toBe(VERSION);
    // The README's "As a library" snippet, as the project's own module.
    writeFileSync(
      path.join(project, 'use.mjs'),
      [
        "import { loadHatchery, Runtime } from 'hatchery-mcp';",
        "import { ScriptedProvider } from 'hatchery-mcp/testing';",
        "const model = new ScriptedProvider(['Hello, Ada!']);",
        'const runtime = new Runtime({ providers: { openai: model, anthropic: model } });',
        "const h = await loadHatchery('node_modules/hatchery-mcp/hatchery/hello.json');",
        "const result = await runtime.run(h, { input: 'Ada' });",
        'await runtime.close();',
        'console.log(result.output);',
      ].join('\n'),
    );
    const lib = await run(process.execPath, ['use.mjs'], project);
    expect(lib.stdout.trim(), lib.stderr).toBe('Hello, Ada!');
  });

  it('installs without warnings and puts hatchery-mcp in the prefix', () => {
    expect(existsSync(tarball)).toBe(true);
    expect(npmWarnings(installOutput)).toEqual([]);
    expect(installOutput).toMatch(/added \d+ packages?/);
    expect(existsSync(bin)).toBe(true);
    // What the README and mcp.json.example point at is in the installed copy.
    for (const f of [
      'dist/cli.js',
      'docs/serving.md',
      'README.md',
      'mcp.json.example',
      'schema/hatchery.schema.json',
    ]) {
      expect(existsSync(path.join(pkgDir, f)), f).toBe(true);
    }
  });

  it('hatchery-mcp --version, as the bin and in the absolute node form', async () => {
    const viaBin = await run(bin, ['--version'], work);
    expect(viaBin).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const viaNode = await run(process.execPath, [path.join(pkgDir, 'dist', 'cli.js'), '--version'], work);
    expect(viaNode).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('hatchery-mcp run prints the output of the example', async () => {
    const r = await run(bin, ['run', 'tools/read-notes.json'], work);
    expect(r.stderr).toMatch(/done: 2 steps/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^# welcome\.md\n\nWelcome to hatchery-mcp\.\n/);
    expect(r.stdout).toMatch(/\(\d+ words\)\n$/);
  });

  describe('hatchery-mcp --dir DIR over stdio, as an MCP client starts it', () => {
    let client: Client;
    let stderr = '';
    beforeAll(async () => {
      // No env given: the SDK passes only its default variables (HOME, PATH...), as desktop clients do.
      const transport = new StdioClientTransport({
        command: bin,
        args: ['--dir', tools],
        cwd: work,
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (b) => {
        stderr += b;
      });
      client = new Client({ name: 'install-test', version: '1.0.0' });
      await client.connect(transport);
    }, 30_000);
    afterAll(async () => {
      await client?.close();
    });

    it('lists the hatchery as a tool and runs it', async () => {
      const { tools: listed } = await client.listTools();
      expect(listed.map((t) => t.name)).toEqual(expect.arrayContaining(['read_notes', 'hatchery_list']));
      const result = await client.callTool({ name: 'read_notes', arguments: { input: 'welcome.md' } });
      expect(result.isError, stderr).toBeFalsy();
      // The result's one text block and its structuredContent are the same JSON (docs/serving.md#results).
      const text = textOf(result);
      expect(result.structuredContent).toMatchObject({ output: text });
      expect(text).toMatch(/^# welcome\.md\n\nWelcome to hatchery-mcp\./);
      expect(text).toMatch(/\(\d+ words\)$/);
      expect(client.getServerVersion()).toMatchObject({ version: VERSION });
    });
  });

  // The README's "From an empty folder to a tool in your client", step by step as a newcomer types it.
  describe('from an empty folder to a tool in a client (README sequence)', () => {
    it('init, test, doctor, then the printed client entry serves hello over stdio', async () => {
      const openai = new FakeOpenAI();
      await openai.start();
      onTestFinished(() => openai.close());
      const t0 = performance.now();
      const empty = path.join(tmp, 'my-tools');
      mkdirSync(empty);
      const init = await run(bin, ['init'], empty);
      expect(init.code, init.stderr).toBe(0);
      for (const f of [
        'hello.json',
        'tests/hello.test.yaml',
        'tests/cassettes/hello.jsonl',
        '.hatcheryignore',
      ]) {
        expect(existsSync(path.join(empty, 'hatchery', f)), f).toBe(true);
      }
      // The entry init prints is what a user pastes: absolute node, this install's CLI, absolute DIR.
      const entries = serverEntries(init.stdout);
      expect(entries.length, init.stdout).toBeGreaterThan(0);
      const { command, args } = entries[0]!;
      expect(path.isAbsolute(command)).toBe(true);
      expect(realpathSync(args[0]!)).toBe(realpathSync(path.join(pkgDir, 'dist', 'cli.js')));
      expect(args[args.indexOf('--dir') + 1]).toBe(path.join(empty, 'hatchery'));

      const test = await run(bin, ['test', 'hatchery'], empty);
      expect(test.code, `${test.stdout}${test.stderr}`).toBe(0);
      const doctor = await run(bin, ['doctor'], empty, { OPENAI_API_KEY: 'sk-test-never-printed' });
      expect(doctor.code, `${doctor.stdout}${doctor.stderr}`).toBe(0);

      // A desktop client: the printed command and args, the key in "env", started from another folder.
      const env = {
        ...getDefaultEnvironment(),
        OPENAI_API_KEY: 'sk-test-never-printed',
        OPENAI_BASE_URL: openai.baseURL,
      };
      const client = new Client({ name: 'first-use-test', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command, args, env, cwd: tmp, stderr: 'pipe' }));
      try {
        const { tools: listed } = await client.listTools();
        expect(listed.map((t) => t.name)).toContain('hello');
        const result = await client.callTool({ name: 'hello', arguments: { input: 'Ada' } });
        const text = textOf(result);
        expect(result.isError, text).toBeFalsy();
        expect(text).toMatch(/^echo: [\s\S]*Ada/);
      } finally {
        await client.close();
      }
      const sequenceMs = performance.now() - t0;
      process.stderr.write(
        `first use: init to a tool result ${Math.round(sequenceMs)} ms; with pack and install ${Math.round(installMs + sequenceMs)} ms\n`,
      );
    }, 60_000);
  });
});

describe('installed from the clone (npm install -g .)', () => {
  it(
    'puts hatchery-mcp on the prefix, linked to the built clone, and it runs elsewhere',
    async () => {
      const tmp = tempDir('hatchery-install-clone-');
      const prefix = path.join(tmp, 'prefix');
      const install = await npm(['install', '-g', '--prefix', prefix, ...INSTALL_FLAGS, REPO_ROOT], tmp);
      expect(npmWarnings(`${install.stdout}\n${install.stderr}`)).toEqual([]);
      const linked = realpathSync(path.join(prefix, 'lib', 'node_modules', 'hatchery-mcp'));
      expect(linked).toBe(realpathSync(REPO_ROOT));
      const r = await run(path.join(prefix, 'bin', 'hatchery-mcp'), ['--version'], tmp);
      expect(r).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
      // The prefix holds a link to the clone: rm removes the link, never what it points at.
      rmSync(tmp, { recursive: true, force: true });
    },
    INSTALL_TIMEOUT,
  );
});
