import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeA2aAgent } from '../fakes/fake-a2a.js';
import { fixtureJs } from '../fixtures/paths.js';
import { runCli, startCli, tempDir } from '../helpers.js';
import { EXAMPLES, waitFor } from '../mcp/helpers.js';

const KEY = 'sk-proj-doctorMustNeverPrintThis-0123456789';

/** A folder made by `hatchery-mcp init`, plus `extra` files (name -> JSON value or raw text). */
async function folder(extra: Record<string, unknown> = {}): Promise<string> {
  const cwd = tempDir('hatchery-doctor-');
  const res = await runCli(['init', 'h'], { cwd });
  expect(res.code).toBe(0);
  const dir = path.join(cwd, 'h');
  for (const [name, value] of Object.entries(extra))
    writeFileSync(path.join(dir, name), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return dir;
}

/** The output line of the check named `name` (with its fix line, if any). */
function lineOf(stdout: string, name: string): string {
  const lines = stdout.split('\n');
  const i = lines.findIndex((l) => l.slice(9).startsWith(name));
  expect(i, `no check "${name}" in:\n${stdout}`).toBeGreaterThanOrEqual(0);
  return [lines[i], lines[i + 1]?.startsWith('         fix:') ? lines[i + 1] : ''].join('\n');
}

describe('hatchery-mcp doctor', () => {
  it('is all good for a fresh init folder with a key, and never prints the key', async () => {
    const dir = await folder();
    const res = await runCli(['doctor', '--dir', dir], { env: { OPENAI_API_KEY: KEY } });
    expect(res.code).toBe(0);
    expect(lineOf(res.stdout, 'node')).toMatch(/^ok/);
    expect(lineOf(res.stdout, 'OPENAI_API_KEY')).toMatch(/^ok .*is set \(alone it selects openai:/);
    expect(lineOf(res.stdout, 'default model')).toMatch(/^ok .*openai:/);
    expect(lineOf(res.stdout, `folder ${dir}`)).toMatch(/^ok .*1 hatchery loads \(hello\)/);
    expect(res.stdout).toMatch(/all good\n$/);
    const json = await runCli(['doctor', '--dir', dir, '--json'], { env: { OPENAI_API_KEY: KEY } });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, problems: 0 });
    for (const out of [res.stdout, res.stderr, json.stdout, json.stderr]) {
      expect(out).not.toContain(KEY);
      expect(out).not.toContain(KEY.slice(0, 12));
    }
  });

  it('warns when no key is set, and names the default model of the key that is', async () => {
    const dir = await folder();
    const none = await runCli(['doctor', '--dir', dir]);
    expect(lineOf(none.stdout, 'API key')).toMatch(
      /^warning .*neither OPENAI_API_KEY nor ANTHROPIC_API_KEY[\s\S]*fix: set/,
    );
    expect(none.code).toBe(0);
    const anthropic = await runCli(['doctor', '--dir', dir], { env: { ANTHROPIC_API_KEY: KEY } });
    expect(lineOf(anthropic.stdout, 'default model')).toMatch(/^ok .*anthropic:/);
  });

  it('reports a HATCHERY_MODEL with a typo, or whose key is missing, as a problem', async () => {
    const dir = await folder();
    const typo = await runCli(['doctor', '--dir', dir], {
      env: { OPENAI_API_KEY: KEY, HATCHERY_MODEL: 'opnai:gpt-5' },
    });
    expect(lineOf(typo.stdout, 'HATCHERY_MODEL')).toMatch(/^problem .*did you mean "openai:"/);
    expect(typo.code).toBe(1);
    const noKey = await runCli(['doctor', '--dir', dir], {
      env: { OPENAI_API_KEY: KEY, HATCHERY_MODEL: 'anthropic:claude-x' },
    });
    expect(lineOf(noKey.stdout, 'default model')).toMatch(
      /^problem .*needs ANTHROPIC_API_KEY[\s\S]*fix: set ANTHROPIC_API_KEY/,
    );
    expect(noKey.code).toBe(1);
    expect(noKey.stdout).not.toContain(KEY);
  });

  it('names a broken file with its first problem and the count of the others; exit 1', async () => {
    const dir = await folder({
      'broken.json': {
        name: 'broken',
        desc: 'x',
        nodes: [{ name: 'A', type: 'drone', usr_promt: 'hi', bogus: 1 }],
      },
    });
    const res = await runCli(['doctor', '--dir', dir], { env: { OPENAI_API_KEY: KEY } });
    expect(res.code).toBe(1);
    expect(lineOf(res.stdout, `folder ${dir}`)).toMatch(/1 hatchery loads \(hello\), 1 file does not/);
    const line = lineOf(res.stdout, path.join(dir, 'broken.json'));
    expect(line).toMatch(/^problem .*does not load: nodes\/0.*\(and \d+ more problems?\)/);
    expect(line).toContain('hatchery-mcp validate');
    expect(res.stdout).toMatch(/1 problem, 0 warnings\n$/);
  });

  it('says a missing folder is a problem and how to make one', async () => {
    const cwd = tempDir('hatchery-doctor-');
    const res = await runCli(['doctor', '--dir', 'nowhere'], { cwd, env: { OPENAI_API_KEY: KEY } });
    expect(res.code).toBe(1);
    expect(lineOf(res.stdout, 'folder nowhere')).toMatch(/does not exist[\s\S]*hatchery-mcp init nowhere/);
  });

  it('finds an mcpServers command that is not on PATH (spawn ENOENT) and says to use an absolute path', async () => {
    const dir = await folder({
      'uses-ghost.json': {
        name: 'uses_ghost',
        desc: 'has a server that does not exist',
        mcpServers: { ghost: { command: 'no-such-mcp-server-xyz', args: ['--stdio'] } },
        nodes: [{ name: 'A', type: 'tool', tool_name: 'echo', tool_args: { text: 'x' } }],
      },
    });
    const res = await runCli(['doctor', '--dir', dir], { env: { OPENAI_API_KEY: KEY } });
    expect(res.code).toBe(1);
    const line = lineOf(res.stdout, 'mcpServers "ghost"');
    expect(line).toMatch(
      /^problem .*"no-such-mcp-server-xyz" is not found on PATH.*spawn no-such-mcp-server-xyz ENOENT/,
    );
    expect(line).toMatch(/fix: .*absolute path/);
  });

  it('starts a working stdio server of --mcp-config and lists its tools', async () => {
    const dir = await folder();
    const config = path.join(path.dirname(dir), 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { echo: { command: process.execPath, args: [fixtureJs('mcp-echo-server')] } },
      }),
    );
    const res = await runCli(['doctor', '--dir', dir, '--mcp-config', config], {
      env: { OPENAI_API_KEY: KEY },
    });
    expect(lineOf(res.stdout, 'mcpServers "echo"')).toMatch(/^ok .*started; \d+ tools: .*echo/);
    expect(res.code).toBe(0);
  });

  it('fetches the card of each a2aAgents entry through the network guard, and names what is wrong', async () => {
    const agent = new FakeA2aAgent({ requireHeaders: { authorization: 'Bearer tok-doctor-a2a' } });
    const url = await agent.start();
    try {
      // Port 1: nothing listens there.
      const down = 'http://127.0.0.1:1';
      const dir = await folder({
        'remote.json': {
          name: 'remote',
          desc: 'asks an agent',
          a2aAgents: {
            helper: { url, headers: { Authorization: `Bearer \${DOCTOR_A2A_TOKEN}` } },
            gone: { url: down },
          },
          nodes: [{ name: 'A', type: 'tool', tool_name: 'a2a:helper#echo', tool_args: { message: 'x' } }],
        },
      });
      // The guard refuses this machine's addresses unless allowed, as a run would, naming the flag.
      const env = { OPENAI_API_KEY: KEY, DOCTOR_A2A_TOKEN: 'tok-doctor-a2a' };
      const guarded = await runCli(['doctor', '--dir', dir], { env });
      expect(guarded.code).toBe(1);
      expect(lineOf(guarded.stdout, 'a2aAgents "helper"')).toMatch(
        new RegExp(`^problem .*refused.*--allow-host ${new URL(url).host}`),
      );
      const allowed = await runCli(['doctor', '--dir', dir, '--allow-private-network'], { env });
      expect(allowed.code).toBe(1);
      expect(lineOf(allowed.stdout, 'a2aAgents "helper"')).toMatch(
        /^ok .*card of "Fake agent" fetched; 1 skill: echo; streams/,
      );
      const gone = lineOf(allowed.stdout, 'a2aAgents "gone"');
      expect(gone).toMatch(/^problem .*could not fetch its agent card/);
      expect(gone).toMatch(/fix: start the agent, or fix the entry \(url, headers\) in .*remote\.json/);
      expect(allowed.stdout).not.toContain('tok-doctor-a2a');
      // Without the variable its header names, the entry says which one to set.
      const unset = await runCli(['doctor', '--dir', dir, '--allow-private-network'], {
        env: { OPENAI_API_KEY: KEY },
      });
      expect(lineOf(unset.stdout, 'a2aAgents "helper"')).toMatch(/^problem .*DOCTOR_A2A_TOKEN/);
    } finally {
      await agent.close();
    }
  });

  it('reports a server that starts but does not speak MCP, with its stderr', async () => {
    const dir = await folder();
    const config = path.join(path.dirname(dir), 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          broken: { command: process.execPath, args: [fixtureJs('mcp-echo-server'), '--fail-start'] },
        },
      }),
    );
    const res = await runCli(['doctor', '--dir', dir, '--mcp-config', config, '--timeout', '10']);
    expect(res.code).toBe(1);
    expect(lineOf(res.stdout, 'mcpServers "broken"')).toMatch(/^problem .*MCP server/);
  });

  it("keeps a key out of a failing server's stderr it quotes", async () => {
    const dir = await folder({
      'leaky.json': {
        name: 'leaky',
        desc: 'its server prints the key it was given and exits',
        mcpServers: {
          leaky: {
            command: process.execPath,
            args: ['-e', 'console.error("my key is " + process.env.MY_TOKEN); process.exit(1)'],
            env: { MY_TOKEN: ['$', '{OPENAI_API_KEY}'].join('') }, // a ${NAME} reference
          },
        },
        nodes: [{ name: 'A', type: 'tool', tool_name: 'echo', tool_args: { text: 'x' } }],
      },
    });
    const res = await runCli(['doctor', '--dir', dir], { env: { OPENAI_API_KEY: KEY } });
    expect(res.code).toBe(1);
    expect(lineOf(res.stdout, 'mcpServers "leaky"')).toMatch(/^problem .*my key is \[redacted\]/);
    expect(res.stdout + res.stderr).not.toContain(KEY);
  });

  it('connects to a URL server of --mcp-config and lists its tools', async () => {
    const server = startCli(['--http', '127.0.0.1:0', '--dir', EXAMPLES]);
    try {
      const url = (await waitFor(() => /listening on (\S+)/.exec(server.err())?.[1], 15_000, 'the server'))!;
      const dir = await folder();
      const config = path.join(path.dirname(dir), 'mcp.json');
      writeFileSync(config, JSON.stringify({ mcpServers: { remote: { url } } }));
      const res = await runCli(['doctor', '--dir', dir, '--mcp-config', config], {
        env: { OPENAI_API_KEY: KEY },
      });
      expect(lineOf(res.stdout, 'mcpServers "remote"')).toMatch(/^ok .*started; \d+ tools: .*hello/);
      expect(res.code).toBe(0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exit;
    }
  });
});
