/**
 * A hatchery calls hatcheries that a second hatchery-mcp process serves over A2A: a baneling calls
 * one hatchery's own agent, and a drone is offered the served folder's skills and picks one, through
 * the fake model; both sides speak through the official SDK, with the server's bearer token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText, type WireBody } from '../fakes/http.js';
import { runCli, tempDir, writeHatchery } from '../helpers.js';
import { fakeEnv } from '../mcp/helpers.js';
import { type Served, serveA2a, TOKEN } from './helpers.js';

const openai = new FakeOpenAI();
let env: Record<string, string>;
let served: Served;

beforeAll(async () => {
  await openai.start();
  env = fakeEnv(`${openai.url}/v1`, 'http://127.0.0.1:9/v1');
  const dir = tempDir('hatchery-a2a-served-');
  writeHatchery(dir, 'shout.json', {
    name: 'shout',
    desc: 'Says the input louder',
    nodes: [
      { name: 'Loud', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input | upper }}!' } },
    ],
  });
  writeHatchery(dir, 'story.json', {
    name: 'story',
    desc: 'Writes a very short story about the input',
    nodes: [{ name: 'Write', usr_prompt: 'story about {{ ctx.input }}' }],
  });
  served = await serveA2a(dir, { env });
});
afterAll(async () => {
  await served?.stop();
  await openai.close();
});

/** A caller whose agents are the served folder and its `shout` hatchery, with the server's token. */
const caller = (nodes: unknown[]) => ({
  name: 'caller',
  desc: 'calls hatcheries served over A2A',
  a2aAgents: {
    folder: { url: served.origin, headers: { Authorization: `Bearer \${PEER_TOKEN}` } },
    shout: { url: `${served.origin}/a2a/shout`, headers: { Authorization: `Bearer \${PEER_TOKEN}` } },
  },
  nodes,
});

const run = (file: string, input: string) =>
  runCli(['run', file, '--input', input, '--allow-host', new URL(served.origin).host], {
    env: { ...env, PEER_TOKEN: TOKEN },
  });

describe('a hatchery calling hatcheries served by another hatchery-mcp over A2A', () => {
  it("runs one hatchery through its own agent and returns that run's output", async () => {
    const file = writeHatchery(
      tempDir(),
      'caller.json',
      caller([{ type: 'tool', tool_name: 'a2a:shout', tool_args: { message: 'hello {{ ctx.input }}' } }]),
    );
    const r = await run(file, 'there');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('HELLO THERE!');
  });

  it("offers the folder's hatcheries as skills to a drone, which picks one", async () => {
    const file = writeHatchery(
      tempDir(),
      'drone.json',
      caller([{ name: 'Pick', usr_prompt: 'tell me about {{ ctx.input }}', tools: ['a2a:folder'] }]),
    );
    let offered: string[] = [];
    const reply = (body: WireBody) => {
      const text = lastUserText(body.messages);
      // The served story hatchery's own drone, in the other process.
      if (text.startsWith('story about')) return { text: `once upon a time, ${text.slice(12)}` };
      const tool = (body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool');
      if (tool) return { text: `the peer wrote: ${tool.content}` };
      offered = (body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
      return { toolCalls: [{ name: 'story', args: { message: 'owls' } }] };
    };
    for (let i = 0; i < 3; i++) openai.enqueue(reply);
    const r = await run(file, 'owls');
    expect(r.code, r.stderr).toBe(0);
    expect(offered.sort()).toEqual(['shout', 'story']);
    expect(r.stdout.trim()).toBe('the peer wrote: once upon a time, owls');
  });

  it('is refused without the token, naming the agent', async () => {
    const file = writeHatchery(
      tempDir(),
      'untold.json',
      caller([{ type: 'tool', tool_name: 'a2a:shout', tool_args: { message: 'hi' } }]),
    );
    const r = await runCli(['run', file, '--input', 'x', '--allow-host', new URL(served.origin).host], {
      env: { ...env, PEER_TOKEN: 'wrong-token-000000' },
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('A2A agent "shout": could not fetch its agent card');
    expect(r.stderr).toContain('401');
    expect(r.stderr).not.toContain('wrong-token-000000');
  });
});
