/**
 * Remote A2A agents from the shell: a drone offered an agent's skills calls one through the fake
 * model, `validate --connect` checks the cards, Ctrl-C reaches the remote task, and runs that call
 * no agent never load the A2A SDK.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeA2aAgent } from '../fakes/fake-a2a.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { modulesLoadedBy, runCli, startCli, tempDir, writeHatchery } from '../helpers.js';
import { fakeEnv, spawnCli, waitFor } from '../mcp/helpers.js';

const openai = new FakeOpenAI();
const agent = new FakeA2aAgent({
  skills: [
    { id: 'echo', name: 'Echo', description: 'Echoes the message back' },
    { id: 'shout', name: 'Shout', description: 'Says the message louder' },
  ],
});
let env: Record<string, string>;
let host: string;

beforeAll(async () => {
  await Promise.all([openai.start(), agent.start()]);
  env = fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1');
  host = new URL(agent.url).host;
});
afterAll(async () => {
  await Promise.all([openai.close(), agent.close()]);
});

/** Every journal line of a state folder, as one text. */
function journalText(state: string): string {
  if (!existsSync(state)) return '';
  return readdirSync(state, { recursive: true })
    .map((f) => path.join(state, String(f)))
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

const caller = (extra: Record<string, unknown> = {}) => ({
  name: 'caller',
  desc: 'asks a remote agent',
  a2aAgents: { remote: { url: agent.url } },
  nodes: [{ name: 'Ask', usr_prompt: '{{ ctx.input }}', tools: ['a2a:remote'] }],
  ...extra,
});

describe('a drone with an A2A agent', () => {
  it("is offered each skill as a tool and gets the agent's answer", async () => {
    const file = writeHatchery(tempDir(), 'caller.json', caller());
    let offered: { name: string; description: string; parameters: unknown }[] = [];
    openai.enqueue(
      (body) => {
        offered = (body.tools ?? []).map(
          (t: { function: { name: string; description: string; parameters: unknown } }) => t.function,
        );
        return { toolCalls: [{ name: 'shout', args: { message: 'hi there' } }] };
      },
      (body) => {
        const tool = (body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool');
        return { text: `the agent said: ${tool?.content}` };
      },
    );
    const r = await runCli(['run', file, '--input', 'greet them', '--allow-host', host], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('the agent said: echo: hi there');
    expect(offered.map((t) => t.name)).toEqual(['echo', 'shout']);
    expect(offered[1]!.description).toBe('Says the message louder (remote A2A agent "Fake agent")');
    expect(offered[1]!.parameters).toMatchObject({ required: ['message'] });
    expect(agent.received.at(-1)).toMatchObject({ text: 'hi there', metadata: { skill: 'shout' } });
  });

  it('cancels the remote task on Ctrl-C', async () => {
    const file = writeHatchery(
      tempDir(),
      'slow.json',
      caller({
        nodes: [{ name: 'Call', type: 'tool', tool_name: 'a2a:remote#echo', tool_args: { message: 'slow' } }],
      }),
    );
    const before = agent.started.length;
    const cli = startCli(['run', file, '--input', 'go', '--allow-host', host], { env });
    await waitFor(() => agent.started.length > before);
    cli.child.kill('SIGINT');
    expect(await cli.exit).not.toBe(0);
    expect(agent.cancelled).toContain(agent.started.at(-1));
  });
});

describe('a hatchery with an A2A agent, served over MCP', () => {
  it('cancels the remote task when the MCP client cancels the call', async () => {
    const dir = tempDir();
    writeHatchery(
      dir,
      'slow.json',
      caller({
        name: 'slow',
        nodes: [{ name: 'Call', type: 'tool', tool_name: 'a2a:remote#echo', tool_args: { message: 'slow' } }],
      }),
    );
    const server = await spawnCli(dir, { env, args: ['--allow-host', host] });
    try {
      const before = agent.started.length;
      const ac = new AbortController();
      const call = server.client.callTool({ name: 'slow', arguments: { input: 'go' } }, undefined, {
        signal: ac.signal,
      });
      await waitFor(() => agent.started.length > before);
      ac.abort();
      await expect(call).rejects.toThrow();
      await waitFor(() => agent.cancelled.includes(agent.started.at(-1)!), 10_000, 'the remote cancel');
    } finally {
      await server.close();
    }
  });
});

describe('validate --connect with A2A agents', () => {
  it('fetches the cards and reports skills they lack and banelings that name none', async () => {
    const file = writeHatchery(
      tempDir(),
      'check.json',
      caller({
        nodes: [
          { name: 'A', type: 'tool', tool_name: 'a2a:remote#shuot', tool_args: { message: 'm' }, next: 'B' },
          { name: 'B', type: 'tool', tool_name: 'a2a:remote', tool_args: { message: 'm' }, next: 'C' },
          { name: 'C', type: 'tool', tool_name: 'a2a:remote#echo', tool_args: { text: 'm' } },
        ],
      }),
    );
    const r = await runCli(['validate', file, '--connect', '--allow-host', host], { env });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('nodes/0/tool_name');
    expect(r.stdout).toContain(
      'A2A agent "remote" has no skill "shuot" (did you mean "shout"?); its skills: echo, shout',
    );
    expect(r.stdout).toContain(
      '"a2a:remote" stands for 2 skills; a baneling calls one: name it as a2a:remote#<skill>',
    );
    expect(r.stdout).toMatch(/nodes\/2\/tool_args.*message/);
  });

  it('passes a file whose skills exist, and names the flag when the agent is refused', async () => {
    const file = writeHatchery(
      tempDir(),
      'good.json',
      caller({ nodes: [{ type: 'tool', tool_name: 'a2a:remote#echo', tool_args: { message: 'm' } }] }),
    );
    const ok = await runCli(['validate', file, '--connect', '--allow-host', host], { env });
    expect(ok.stdout + ok.stderr).toContain('1 valid, 0 invalid');
    expect(ok.code).toBe(0);
    const refused = await runCli(['validate', file, '--connect'], { env });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain(`A2A agent "remote": refused ${agent.url}/.well-known/agent-card.json`);
    expect(refused.stdout).toContain(`--allow-host ${host}`);
  });
});

describe('loading the A2A SDK', () => {
  /** The A2A SDK and Express modules `hatchery-mcp <args>` imported. */
  const sdkLoadedBy = (args: string[]) => modulesLoadedBy(args, /\/node_modules\/(@a2a-js|express)\//, env);

  it('happens only for a run that calls an agent', async () => {
    expect(await sdkLoadedBy(['run', 'hatchery/read-notes.json'])).toEqual([]);
    const file = writeHatchery(
      tempDir(),
      'one.json',
      caller({ nodes: [{ type: 'tool', tool_name: 'a2a:remote#echo', tool_args: { message: 'm' } }] }),
    );
    const loaded = await sdkLoadedBy(['run', file, '--allow-host', host]);
    expect(loaded.some((l) => l.includes('/node_modules/@a2a-js/sdk/'))).toBe(true);
    expect(loaded.some((l) => l.includes('/node_modules/express/'))).toBe(false);
  });
});

describe('credentials of an agent', () => {
  it('never reach the output or the journal, even when the agent sends them back', async () => {
    const token = 'a2a-secret-token-0123456789';
    const state = path.join(tempDir('hatchery-a2a-state-'), 'runs');
    const file = writeHatchery(
      tempDir(),
      'leak.json',
      caller({
        a2aAgents: {
          remote: { url: agent.url, headers: { Authorization: `Bearer \${REMOTE_AGENT_TOKEN}` } },
        },
        nodes: [{ type: 'tool', tool_name: 'a2a:remote#echo', tool_args: { message: 'headers' } }],
      }),
    );
    const r = await runCli(['run', file, '--allow-host', host], {
      env: { ...env, REMOTE_AGENT_TOKEN: token, HATCHERY_STATE: state },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('you sent Bearer');
    expect(r.stdout + r.stderr).not.toContain(token);
    const journal = journalText(state);
    expect(journal).toContain('you sent Bearer');
    expect(journal).not.toContain(token);
  });
});

describe('a cassette', () => {
  it('records an A2A call and answers it on replay without messaging the agent', async () => {
    const other = new FakeA2aAgent();
    await other.start();
    const dir = tempDir();
    const file = writeHatchery(dir, 'rec.json', {
      name: 'rec',
      desc: 'one remote call',
      a2aAgents: { far: { url: other.url } },
      nodes: [{ type: 'tool', tool_name: 'a2a:far#echo', tool_args: { message: 'taped {{ ctx.input }}' } }],
    });
    const cas = path.join(dir, 'rec.cassette.json');
    const flags = ['--input', 'x', '--allow-host', new URL(other.url).host];
    const rec = await runCli(['run', file, ...flags, '--record', cas], { env });
    expect(rec.code, rec.stderr).toBe(0);
    expect(rec.stdout.trim()).toBe('echo: taped x');
    // As an MCP server is started to list its tools, the card is fetched: its skills are the tools.
    const rep = await runCli(['run', file, ...flags, '--replay', cas], { env });
    await other.close();
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout.trim()).toBe('echo: taped x');
    expect(other.received).toHaveLength(1);
    expect(other.cardFetches).toBe(2);
  });
});

describe('a run resumed after a crash', () => {
  it('takes a remote call its journal holds from there: the agent gets the message once', async () => {
    const state = path.join(tempDir('hatchery-a2a-resume-'), 'runs');
    const runEnv = { ...env, HATCHERY_STATE: state };
    const file = writeHatchery(
      tempDir(),
      'resume.json',
      caller({
        nodes: [{ name: 'Ask', usr_prompt: 'resume {{ ctx.input }}', tools: ['a2a:remote#echo'] }],
      }),
    );
    let held = false;
    const turn = (body: { messages: { role: string; content: string }[] }) => {
      const result = body.messages.find((m) => m.role === 'tool');
      if (!result) return { toolCalls: [{ name: 'echo', args: { message: 'keep me once' } }] };
      // The turn after the call: the first time, the process is killed while the model "thinks".
      if (!held) {
        held = true;
        return { text: 'too late', delayMs: 60_000 };
      }
      return { text: `final: ${result.content}` };
    };
    for (let i = 0; i < 6; i++) openai.enqueue(turn);
    const sent = () => agent.received.filter((m) => m.text === 'keep me once').length;
    const before = openai.requests.length;
    const cli = startCli(['run', file, '--input', 'x', '--allow-host', host], { env: runEnv });
    await waitFor(
      () => sent() === 1 && openai.requests.length === before + 2,
      15_000,
      'the call and the next turn',
    );
    // The journal is written behind the run: the kill comes once it holds the call.
    await waitFor(() => journalText(state).includes('"type":"tool_call"'), 15_000, 'the call in the journal');
    cli.child.kill('SIGKILL');
    await cli.exit;
    const list = JSON.parse((await runCli(['runs', 'list', '--json'], { env: runEnv })).stdout) as {
      id: string;
    }[];
    expect(list).toHaveLength(1);
    const resumed = await runCli(['runs', 'resume', list[0]!.id, '--allow-host', host], { env: runEnv });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe('final: echo: keep me once');
    expect(sent()).toBe(1);
  });
});
