/**
 * Issue 8, child environments: scripts, shell_exec and stdio MCP servers get an allow-list of this
 * process's variables plus what the file's `env` names, never tokens, credentials or passwords.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, expandEnvValue } from '../../src/core/process/child-env.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { McpPool } from '../../src/tools/mcp-client.js';
import { tempDir } from '../helpers.js';
import { loadIn, problemsIn, Scripted, toolResults } from '../tools/helpers.js';
import { treeServer } from './procs-helpers.js';

const SECRETS: Record<string, string> = {
  GITHUB_TOKEN: 'ghp_secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  DATABASE_URL: 'postgres://user:pw@db/prod',
  SOME_PASSWORD: 'hunter2',
  OPENAI_API_KEY: 'sk-secret',
};
const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const k of Object.keys(SECRETS)) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

const PRINT_ENV = [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'];

/** Asserts the child policy: allow-listed variables yes, the parent's secrets no. */
function expectPolicy(env: Record<string, string>) {
  expect(env.PATH).toBe(process.env.PATH);
  expect(env.HOME).toBe(process.env.HOME);
  for (const k of Object.keys(SECRETS)) expect(env, k).not.toHaveProperty(k);
}

describe('script nodes', () => {
  it('see PATH and HOME but none of the parent secrets', async () => {
    const h = loadIn(tempDir(), { name: 'e', desc: 'd', nodes: [{ type: 'script', cmd: PRINT_ENV }] });
    const env = JSON.parse((await new Runtime({ env: {} }).run(h, { input: '' })).output);
    expectPolicy(env);
  });

  it('see what the file `env` names: literal values and references to parent variables', async () => {
    const h = loadIn(tempDir(), {
      name: 'e',
      desc: 'd',
      nodes: [
        {
          type: 'script',
          cmd: PRINT_ENV,
          env: { GITHUB_TOKEN: `\${GITHUB_TOKEN}`, MODE: 'fast', URL: `https://x/\${NOT_SET_ANYWHERE}y` },
        },
      ],
    });
    const env = JSON.parse((await new Runtime({ env: {} }).run(h, { input: '' })).output);
    expect(env.GITHUB_TOKEN).toBe('ghp_secret');
    expect(env.MODE).toBe('fast');
    expect(env.URL).toBe('https://x/y');
    expect(env).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
  });

  it('reject an env that is not a map of strings, at load time', () => {
    expect(
      problemsIn(tempDir(), {
        name: 'e',
        desc: 'd',
        nodes: [{ type: 'script', cmd: ['env'], env: { N: 1 } }],
      }),
    ).toEqual([expect.stringMatching(/^nodes\/0\/env\/N: /)]);
  });
});

describe('shell_exec', () => {
  it('gets the same allow-list', async () => {
    const h = loadIn(tempDir(), {
      name: 's',
      desc: 'd',
      nodes: [{ usr_prompt: 'go', tools: ['shell_exec'] }],
    });
    const model = new Scripted([{ toolCalls: [{ name: 'shell_exec', args: { argv: PRINT_ENV } }] }, 'done']);
    await new Runtime({ providers: { openai: model }, env: {}, tools: { allowShell: true } }).run(h);
    const [res] = toolResults(model);
    expect(res).toMatchObject({ isError: false });
    expectPolicy(JSON.parse(String(res!.content)));
  });
});

describe('stdio MCP servers', () => {
  const pools: McpPool[] = [];
  afterEach(async () => {
    while (pools.length) await pools.pop()!.close();
  });
  const never = new AbortController().signal;

  async function serverEnv(env?: Record<string, string>): Promise<Record<string, string>> {
    const pool = new McpPool();
    pools.push(pool);
    const tool = await pool.tool('tree', treeServer(env), 'env', never);
    return JSON.parse((await tool.call({}, { signal: never } as never)).text);
  }

  it('get the same allow-list (the SDK would pass PATH and HOME only; we used to pass everything)', async () => {
    expectPolicy(await serverEnv());
  });

  it('get what the entry env names, references taken from this process', async () => {
    const env = await serverEnv({ GITHUB_TOKEN: `\${GITHUB_TOKEN}`, LEVEL: 'debug' });
    expect(env.GITHUB_TOKEN).toBe('ghp_secret');
    expect(env.LEVEL).toBe('debug');
    expect(env).not.toHaveProperty('DATABASE_URL');
  });
});

describe('the policy itself', () => {
  it('keeps locale variables, drops the rest, expands only the braced reference form', () => {
    const parent = { PATH: '/bin', LC_ALL: 'C', LANG: 'C', SECRET: 's', TOKEN: 't' };
    expect(childEnv(undefined, parent)).toEqual({ PATH: '/bin', LC_ALL: 'C', LANG: 'C' });
    expect(childEnv({ A: `\${TOKEN}`, B: `\${UNSET}`, C: '$TOKEN', D: `x\${UNSET}y` }, parent)).toEqual({
      PATH: '/bin',
      LC_ALL: 'C',
      LANG: 'C',
      A: 't',
      C: '$TOKEN',
      D: 'xy',
    });
    expect(expandEnvValue(`\${SECRET}-\${TOKEN}`, parent)).toBe('s-t');
  });
});
