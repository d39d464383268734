/**
 * The README's install paths, done as a user does them, from folders outside the repository: pack the
 * package, install the tarball into a scratch global prefix, and use the installed `hatchery-mcp`
 * (version, `run`, and an MCP client over stdio); install from the clone the same way. One pack and
 * one install serve the whole file: they take seconds each.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers.js';
import { npm, npmWarnings, shellEnv } from './docs.js';

const VERSION = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const INSTALL_TIMEOUT = 180_000;
/** Offline when the cache holds everything (it does after `npm ci`); the registry otherwise, nothing else. */
const INSTALL_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline'];

/** Runs a program with an empty stdin; resolves with its exit code and both streams (never rejects on a non-zero exit). */
function run(
  file: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { cwd, env: shellEnv() }, (err, stdout, stderr) => {
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
    // The README's `npm install -g ./hatchery-mcp-X.tgz`, into a scratch prefix, from another folder.
    const install = await npm(['install', '-g', '--prefix', prefix, ...INSTALL_FLAGS, tarball], work);
    installOutput = `${install.stdout}\n${install.stderr}`;
    process.stderr.write(
      `install test: npm pack ${Math.round(pack.ms)} ms, npm install -g of the tarball ${Math.round(install.ms)} ms\n`,
    );
    // A no-key example copied out of the installed package, as a user would start.
    mkdirSync(tools);
    cpSync(path.join(pkgDir, 'hatchery', 'read-notes.json'), path.join(tools, 'read-notes.json'));
    cpSync(path.join(pkgDir, 'hatchery', 'notes'), path.join(tools, 'notes'), { recursive: true });
  }, INSTALL_TIMEOUT);
  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
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
      const text = (result.content as { type: string; text: string }[])[0]!.text;
      expect(text).toMatch(/^# welcome\.md\n\nWelcome to hatchery-mcp\./);
      expect(text).toMatch(/\(\d+ words\)$/);
      expect(client.getServerVersion()).toMatchObject({ version: VERSION });
    });
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
