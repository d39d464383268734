/**
 * Where stdio MCP servers start: the built CLI runs a hatchery from another working folder, and a
 * real stdio server (test/fixtures/mcp-cwd-server.ts) answers with its own process.cwd().
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { fixtureJs } from '../fixtures/paths.js';
import { runCli, tempDir } from '../helpers.js';

const CWD_SERVER = fixtureJs('mcp-cwd-server');
const SERVER = { command: process.execPath, args: [CWD_SERVER] };

/** A file that asks the server `where` for its folder with a baneling; `extra` adds top-level keys. */
function writeHatchery(file: string, extra: Record<string, unknown> = {}, nodes?: unknown[]): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const def = {
    name: 'where',
    desc: 'Asks an MCP server where it runs.',
    nodes: nodes ?? [{ name: 'Ask', type: 'baneling', tool_name: 'mcp:where/cwd', tool_args: {} }],
    ...extra,
  };
  writeFileSync(file, JSON.stringify(def));
  return file;
}

/** Runs the file with the built CLI from a folder that is neither the file's nor the repository. */
async function run(file: string, extra: string[] = [], env: Record<string, string> = {}) {
  const elsewhere = tempDir('hatchery-shell-');
  return runCli(['run', file, '--input', 'x', '--allow-root', path.dirname(path.dirname(file)), ...extra], {
    cwd: elsewhere,
    env,
  });
}

let root: string;
beforeEach(() => {
  root = tempDir('hatchery-cwd-');
});

describe('stdio mcpServers start in the folder of the file that defines them', () => {
  it('without cwd: the hatchery file folder, not the shell folder', async () => {
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), { mcpServers: { where: SERVER } });
    const res = await run(file);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(path.join(root, 'proj'));
  });

  it('a relative cwd is taken from the hatchery file folder', async () => {
    mkdirSync(path.join(root, 'proj', 'sub'), { recursive: true });
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), {
      mcpServers: { where: { ...SERVER, cwd: 'sub' } },
    });
    const res = await run(file);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(path.join(root, 'proj', 'sub'));
  });

  it('an absolute cwd is used as it is', async () => {
    const other = tempDir('hatchery-abs-');
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), {
      mcpServers: { where: { ...SERVER, cwd: other } },
    });
    const res = await run(file);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(other);
  });

  it('a missing cwd folder is a load-time error naming the server, the file and the folder', async () => {
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), {
      mcpServers: { where: { ...SERVER, cwd: 'nowhere' } },
    });
    const res = await run(file);
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(file);
    expect(res.stderr).toContain('mcpServers/where/cwd');
    expect(res.stderr).toContain('MCP server "where"');
    expect(res.stderr).toContain(`the folder ${path.join(root, 'proj', 'nowhere')} does not exist`);
    // One message per problem: not also the spawn's ENOENT read as "program not found".
    expect(res.stderr).not.toContain('program not found');
    // validate says the same without starting anything.
    const v = await runCli(['validate', file], { cwd: tempDir() });
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toContain(`the folder ${path.join(root, 'proj', 'nowhere')} does not exist`);
  });

  it('one server name and command in two folders is two processes, each in its own folder', async () => {
    // where.json calls its server, then inner/inner.json (same name, same command) calls its own.
    const inner = writeHatchery(path.join(root, 'proj', 'inner', 'inner.json'), {
      name: 'inner',
      mcpServers: { where: SERVER },
    });
    expect(inner).toBeTruthy();
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), { mcpServers: { where: SERVER } }, [
      { name: 'Ask', type: 'baneling', tool_name: 'mcp:where/cwd', tool_args: {}, next: 'Inner' },
      {
        name: 'Inner',
        type: 'baneling',
        tool_name: 'hatch:inner/inner.json',
        tool_args: { input: 'x' },
        next: 'Both',
      },
      {
        name: 'Both',
        type: 'baneling',
        tool_name: 'echo',
        tool_args: { text: '{{ out.Ask }}|{{ out.Inner }}' },
      },
    ]);
    const res = await run(file);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(`${path.join(root, 'proj')}|${path.join(root, 'proj', 'inner')}`);
  });

  it('--mcp-config servers start in the config file folder (a relative cwd is taken from it too)', async () => {
    const conf = path.join(root, 'conf');
    mkdirSync(path.join(conf, 'sub'), { recursive: true });
    const config = path.join(conf, 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { where: SERVER, there: { ...SERVER, cwd: 'sub' } } }),
    );
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), {}, [
      { name: 'Ask', type: 'baneling', tool_name: 'mcp:where/cwd', tool_args: {}, next: 'There' },
      { name: 'There', type: 'baneling', tool_name: 'mcp:there/cwd', tool_args: {}, next: 'Both' },
      {
        name: 'Both',
        type: 'baneling',
        tool_name: 'echo',
        tool_args: { text: '{{ out.Ask }}|{{ out.There }}' },
      },
    ]);
    const res = await run(file, ['--mcp-config', config]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(`${conf}|${path.join(conf, 'sub')}`);
  });

  it('a missing cwd in --mcp-config names the server, the config file and the folder', async () => {
    const config = path.join(root, 'conf', 'mcp.json');
    mkdirSync(path.dirname(config), { recursive: true });
    writeFileSync(config, JSON.stringify({ mcpServers: { where: { ...SERVER, cwd: 'gone' } } }));
    const file = writeHatchery(path.join(root, 'proj', 'where.json'));
    const res = await run(file, ['--mcp-config', config]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('MCP server "where"');
    expect(res.stderr).toContain(config);
    expect(res.stderr).toContain(`the folder ${path.join(root, 'conf', 'gone')} does not exist`);
  });
});

describe('the per-node "mcp" command-line form', () => {
  const { openai } = fakeVendors();
  beforeEach(() => openai.reset());

  it('starts in the hatchery file folder', async () => {
    // The model asks for the server's cwd tool, then answers with what the tool returned.
    openai.enqueue({ toolCalls: [{ name: 'cwd', args: {} }] }, (body) => {
      const result = body.messages.find((m: { role: string }) => m.role === 'tool');
      return { text: `tool said: ${result?.content}` };
    });
    const line = `'${process.execPath}' '${CWD_SERVER}'`;
    const file = writeHatchery(path.join(root, 'proj', 'where.json'), {}, [
      { name: 'Ask', sys_prompt: 'Use the tool.', usr_prompt: 'Where?', mcp: [line] },
    ]);
    const res = await run(file, [], { OPENAI_API_KEY: 'sk-test-key', OPENAI_BASE_URL: openai.baseURL });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(`tool said: ${path.join(root, 'proj')}`);
  });
});

describe('a cwd folder that is gone when the server starts', () => {
  it('is an error naming the server and the folder, not "program not found"', async () => {
    const { McpPool } = await import('../../src/tools/mcp-client.js');
    const pool = new McpPool();
    const gone = path.join(root, 'removed-after-load');
    try {
      const err = await pool
        .tools('where', { ...SERVER, cwd: gone }, new AbortController().signal)
        .catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain('MCP server "where"');
      expect((err as Error).message).toContain(`the folder ${gone} does not exist`);
      expect((err as Error).message).not.toContain('program not found');
    } finally {
      await pool.close();
    }
  });
});
