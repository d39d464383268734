/**
 * A drone on the MCP client's model (`sampling`, or its alias `client`) run where no client can sample
 * (the CLI) falls back to its `client_fallback`, else to the environment's default model, and fails
 * naming the node and what to set only when there is neither. Through the built CLI against the fake
 * OpenAI server, which counts the requests.
 */
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { fakeVendors } from '../fakes/vendors.js';
import { type CliFolder, cliFolder, runCli } from '../helpers.js';
import { loadIn, problemsIn } from '../tools/helpers.js';

const { openai } = fakeVendors();
const KEY = 'sk-fallback-secret-123456';

let folder: CliFolder;
beforeEach(() => {
  folder = cliFolder({
    prefix: 'hatchery-fallback-',
    env: () => ({ OPENAI_BASE_URL: openai.baseURL }),
    runArgs: ['--input', 'owls', '--no-journal'],
  });
  openai.reset();
});

const drone = (extra: Record<string, unknown> = {}) => ({
  name: 'Draft',
  usr_prompt: 'write about {{ ctx.input }}',
  model: 'sampling',
  ...extra,
});

const file = (nodes: unknown[], top: Record<string, unknown> = {}) => ({
  name: 'f',
  desc: 'd',
  ...top,
  nodes,
});

/** What a CLI run adds to the folder's environment (the fake server's base URL) to have the key. */
const withKey = { env: { OPENAI_API_KEY: KEY } };

const models = () => openai.requests.map((r) => r.body.model);

describe('client_fallback', () => {
  it("a sampling drone run from the CLI uses the drone's client_fallback", async () => {
    openai.enqueue('from the fallback');
    const res = await folder.run(
      folder.write('f.json', file([drone({ client_fallback: 'openai:gpt-fallback' })])),
      [],
      withKey,
    );
    expect(res).toMatchObject({ code: 0, stdout: 'from the fallback\n' });
    expect(models()).toEqual(['gpt-fallback']);
  });

  it("`client` is the same as `sampling`, and the hatchery's client_fallback serves every drone", async () => {
    openai.enqueue('one', 'two');
    const f = folder.write(
      'f.json',
      file([drone({ model: 'client', next: 'Edit' }), drone({ name: 'Edit', model: 'client:some-hint' })], {
        client_fallback: 'openai:gpt-file-fallback',
      }),
    );
    const res = await folder.run(f, [], withKey);
    expect(res).toMatchObject({ code: 0, stdout: 'two\n' });
    expect(models()).toEqual(['gpt-file-fallback', 'gpt-file-fallback']);
  });

  it("the drone's own client_fallback wins over the hatchery's", async () => {
    const f = folder.write(
      'f.json',
      file([drone({ client_fallback: 'openai:gpt-own' })], { client_fallback: 'openai:gpt-file' }),
    );
    expect((await folder.run(f, [], withKey)).code).toBe(0);
    expect(models()).toEqual(['gpt-own']);
  });

  it('without client_fallback, the default model of the environment stands in', async () => {
    const res = await folder.run(folder.write('f.json', file([drone()])), [], withKey);
    expect(res.code).toBe(0);
    expect(models()).toEqual(['gpt-5.4-mini']);
  });

  it('without client_fallback and without a key, it fails naming the node and what to set, and calls nothing', async () => {
    const res = await folder.run(folder.write('f.json', file([drone()])));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('node "Draft"');
    expect(res.stderr).toContain('client_fallback');
    expect(res.stderr).toContain('OPENAI_API_KEY');
    expect(res.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(openai.requests).toHaveLength(0);
  });

  it('a client_fallback whose key is missing is reported before the run, naming the variable and the field', async () => {
    const res = await folder.run(
      folder.write('f.json', file([drone({ client_fallback: 'anthropic:claude-sonnet-5-5' })])),
      [],
      withKey,
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('ANTHROPIC_API_KEY');
    expect(res.stderr).toContain('client_fallback');
    expect(openai.requests).toHaveLength(0);
  });

  it('a recorded fallback run replays without a key: the fallback, or the recorded model, stands in', async () => {
    for (const [fallback, recorded] of [
      ['openai:gpt-fallback', 'gpt-fallback'],
      [undefined, 'gpt-5.4-mini'],
    ] as const) {
      openai.reset();
      openai.enqueue('recorded answer');
      const f = folder.write('f.json', file([drone(fallback ? { client_fallback: fallback } : {})]));
      const cas = path.join(folder.dir, 'run.jsonl');
      const args = ['run', f, '--input', 'owls', '--no-journal'];
      const rec = await folder.cli([...args, '--record', cas], withKey);
      expect(rec).toMatchObject({ code: 0, stdout: 'recorded answer\n' });
      expect(models()).toEqual([recorded]);
      const rep = await runCli([...args, '--replay', cas], { cwd: folder.dir });
      expect(rep).toMatchObject({ code: 0, stdout: 'recorded answer\n' });
      expect(openai.requests).toHaveLength(1);
    }
  });

  it('a run whose client can sample uses the client, not the fallback', async () => {
    const client = new ScriptedProvider(['from the client']);
    const rt = new Runtime({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openai.baseURL } });
    try {
      const h = loadIn(folder.dir, file([drone({ client_fallback: 'openai:gpt-fallback' })]));
      const res = await rt.run(h, { input: 'owls', sampling: client });
      expect(res.output).toBe('from the client');
      expect(client.calls).toHaveLength(1);
      expect(openai.requests).toHaveLength(0);
    } finally {
      await rt.close();
    }
  });
});

describe('client_fallback validation', () => {
  it('refuses a client_fallback that is the client again, or has an unknown prefix, on a drone and at the top', () => {
    expect(problemsIn(folder.dir, file([drone({ client_fallback: 'sampling' })]))).toEqual([
      expect.stringMatching(
        /^nodes\/0\/client_fallback: client_fallback "sampling" of node "Draft" is the MCP client's model again/,
      ),
    ]);
    expect(problemsIn(folder.dir, file([drone({ client_fallback: 'client:gpt' })]))).toEqual([
      expect.stringMatching(/^nodes\/0\/client_fallback: .*the MCP client's model again/),
    ]);
    expect(problemsIn(folder.dir, file([drone()], { client_fallback: 'opnai:gpt-4o' }))).toEqual([
      expect.stringMatching(
        /^client_fallback: client_fallback: unknown provider prefix "opnai:".*did you mean "openai:"/,
      ),
    ]);
    // A drone with its own base_url may name a bare model with a colon, but not fall back to the client.
    expect(
      problemsIn(folder.dir, file([drone({ base_url: 'http://127.0.0.1:1/v1', client_fallback: 'client' })])),
    ).toEqual([expect.stringMatching(/^nodes\/0\/client_fallback: .*the MCP client's model again/)]);
  });

  it('names the file, the node and the field when the CLI loads it', async () => {
    const f = folder.write('bad.json', file([drone({ client_fallback: 'sampling:x' })]));
    const res = await folder.cli(['validate', f]);
    expect(res.code).not.toBe(0);
    const out = res.stdout + res.stderr;
    expect(out).toContain('bad.json');
    expect(out).toContain('client_fallback');
    expect(out).toContain('nodes/0/client_fallback');
    expect(out).toContain('node "Draft"');
  });
});
