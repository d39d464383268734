/**
 * Remote A2A agents as tools: a baneling calls an @a2a-js/sdk agent over loopback (streaming and
 * polled, 1.0 and 0.3), and every way a task can end comes back as the user needs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import type { ToolResolverOptions } from '../../src/tools/resolve.js';
import { FakeA2aAgent } from '../fakes/fake-a2a.js';
import { tempDir } from '../helpers.js';
import { loadIn, problemsIn } from '../tools/helpers.js';

const streaming = new FakeA2aAgent();
const polled = new FakeA2aAgent({ streaming: false });
const guarded = new FakeA2aAgent({ requireHeaders: { authorization: 'Bearer tok-123' } });
const legacy = new FakeA2aAgent({ legacyOnly: true });
const agents = [streaming, polled, guarded, legacy];

beforeAll(async () => {
  await Promise.all(agents.map((a) => a.start()));
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
});

/** Tool options that let runs reach the loopback agents. */
const open = (): ToolResolverOptions => ({ allowHosts: agents.map((a) => new URL(a.url).host) });

/** Runs one baneling calling `tool` with `message`; resolves to its output or the error. */
async function call(
  tool: string,
  message: string,
  extra: Record<string, unknown> = {},
  tools: ToolResolverOptions = open(),
  env: Record<string, string> = {},
): Promise<string | HatcheryError> {
  const h = loadIn(tempDir(), {
    name: 'caller',
    desc: 'd',
    a2aAgents: { echo: { url: streaming.url }, polled: { url: polled.url } },
    ...extra,
    nodes: [{ name: 'Call', type: 'tool', tool_name: tool, tool_args: { message } }],
  });
  try {
    return (await new Runtime({ env, tools }).run(h)).output;
  } catch (err) {
    if (err instanceof HatcheryError) return err;
    throw err;
  }
}

const message = (r: string | HatcheryError) => (typeof r === 'string' ? r : r.message);

describe('a2a: tools called by a baneling', () => {
  it('sends the message to the named skill over the stream and returns the artifact', async () => {
    const before = streaming.received.length;
    expect(await call('a2a:echo#echo', 'hello there')).toBe('echo: hello there');
    const got = streaming.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.metadata).toEqual({ skill: 'echo' });
    expect(got[0]!.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('polls an agent that does not stream until its task is done', async () => {
    expect(await call('a2a:polled', 'polled hi')).toBe('echo: polled hi');
    expect(polled.received.at(-1)!.text).toBe('polled hi');
  });

  it('calls an agent by URL, without an a2aAgents entry', async () => {
    expect(await call(`a2a:${streaming.url}#echo`, 'by url')).toBe('echo: by url');
  });

  it('speaks A2A 0.3 to an agent whose card offers only 0.3', async () => {
    expect(await call(`a2a:${legacy.url}`, 'old friend')).toBe('echo: old friend');
    expect(legacy.methods).toEqual(['message/stream']);
    expect(streaming.methods).toContain('SendStreamingMessage');
    expect(streaming.methods.some((m) => m.includes('/'))).toBe(false);
  });

  it('fetches a card once and reuses it across runs', async () => {
    const fresh = new FakeA2aAgent();
    await fresh.start();
    try {
      const runtime = new Runtime({ env: {}, tools: { allowHosts: [new URL(fresh.url).host] } });
      const h = loadIn(tempDir(), {
        name: 'twice',
        desc: 'd',
        nodes: [{ type: 'tool', tool_name: `a2a:${fresh.url}`, tool_args: { message: '{{ ctx.input }}' } }],
      });
      expect((await runtime.run(h, { input: 'one' })).output).toBe('echo: one');
      expect((await runtime.run(h, { input: 'two' })).output).toBe('echo: two');
      expect(fresh.cardFetches).toBe(1);
      await runtime.close();
    } finally {
      await fresh.close();
    }
  });

  it('derives the message id from the run and the call: the same in a second attempt, new in another run', async () => {
    const h = loadIn(tempDir(), {
      name: 'ids',
      desc: 'd',
      nodes: [
        {
          name: 'A',
          type: 'tool',
          tool_name: `a2a:${streaming.url}`,
          tool_args: { message: 'same' },
          next: 'B',
        },
        { name: 'B', type: 'tool', tool_name: `a2a:${streaming.url}`, tool_args: { message: 'same' } },
      ],
    });
    const ids = async (runId?: string) => {
      const before = streaming.received.length;
      await new Runtime({ env: {}, tools: open() }).run(h, { runId });
      return streaming.received.slice(before).map((r) => r.messageId);
    };
    const first = await ids('run-1');
    expect(first).toHaveLength(2);
    expect(new Set(first).size).toBe(2);
    expect(await ids('run-1')).toEqual(first);
    const other = await ids('run-2');
    expect(other.some((id) => first.includes(id))).toBe(false);
  });

  it('returns data parts as JSON', async () => {
    expect(JSON.parse(await (call('a2a:echo', 'data: {"n": 3, "ok": true}') as Promise<string>))).toEqual({
      n: 3,
      ok: true,
    });
  });

  it("fails the node with the agent's reason when the task fails or is rejected", async () => {
    expect(message(await call('a2a:echo', 'fail: the disk is full'))).toContain(
      'A2A agent "echo" (skill "echo"): the task failed: the disk is full',
    );
    expect(message(await call('a2a:polled', 'reject: not my job'))).toContain(
      'A2A agent "polled" (skill "echo"): the agent rejected the task: not my job',
    );
  });

  it('turns input-required and auth-required into errors naming the agent and the state, and cancels the task', async () => {
    const asked = await call('a2a:echo', 'ask: which city?');
    expect(message(asked)).toContain(
      'A2A agent "echo" (skill "echo"): the agent needs more input (input-required): which city?',
    );
    const task = streaming.started.at(-1)!;
    expect(streaming.cancelled).toContain(task);
    expect(message(await call('a2a:polled', 'auth: who are you'))).toContain(
      'the agent needs authentication (auth-required): who are you',
    );
  });

  it('cancels the remote task when the call times out', async () => {
    const r = await call('a2a:echo', 'slow', {
      a2aAgents: { echo: { url: streaming.url, timeout_ms: 300 } },
    });
    expect(message(r)).toMatch(/timed out after 300 ms/);
    const task = streaming.started.at(-1)!;
    await expect.poll(() => streaming.cancelled).toContain(task);
  });

  it('cancels the remote task when the run spends its budget', async () => {
    const r = await call('a2a:polled', 'slow', { budget: { wall_ms: 300 } });
    expect(r).toBeInstanceOf(HatcheryError);
    expect((r as HatcheryError).code).toBe('BUDGET_EXHAUSTED');
    await expect.poll(() => polled.cancelled).toContain(polled.started.at(-1)!);
  });

  it('cancels the remote task of a polled agent when the run is cancelled', async () => {
    const h = loadIn(tempDir(), {
      name: 'caller',
      desc: 'd',
      nodes: [{ type: 'tool', tool_name: `a2a:${polled.url}`, tool_args: { message: 'slow' } }],
    });
    const ac = new AbortController();
    const before = polled.started.length;
    const run = new Runtime({ env: {}, tools: open() }).run(h, { signal: ac.signal });
    await expect.poll(() => polled.started.length).toBe(before + 1);
    ac.abort();
    await expect(run).rejects.toThrow(/cancel/i);
    await expect.poll(() => polled.cancelled).toContain(polled.started.at(-1)!);
  });

  it('sends the headers of the entry, with variables taken from the environment', async () => {
    const extra = {
      a2aAgents: { secure: { url: guarded.url, headers: { Authorization: `Bearer \${AGENT_TOKEN}` } } },
    };
    process.env.AGENT_TOKEN = 'tok-123';
    try {
      expect(await call('a2a:secure', 'with token', extra)).toBe('echo: with token');
    } finally {
      delete process.env.AGENT_TOKEN;
    }
    expect(message(await call('a2a:secure', 'no token', extra))).toContain(
      `its header "Authorization" uses \${AGENT_TOKEN}, but the environment variable AGENT_TOKEN is not set`,
    );
  });

  it('refuses a loopback agent unless the operator allowed it, naming the flag', async () => {
    const r = message(await call('a2a:echo', 'hi', {}, {}));
    expect(r).toContain('A2A agent "echo": refused');
    expect(r).toContain(`--allow-host ${new URL(streaming.url).host}`);
  });

  it('calls an agent whose 1.0 card lists no skills, which ProtoJSON leaves out', async () => {
    const bare = new FakeA2aAgent({ skills: [] });
    const url = await bare.start();
    try {
      const card = (await (
        await fetch(`${url}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
      ).json()) as Record<string, unknown>;
      expect(card).not.toHaveProperty('skills');
      const r = await call(`a2a:${url}`, 'no skills', {}, { allowHosts: [new URL(url).host] });
      expect(r).toBe('echo: no skills');
      expect(bare.received.at(-1)?.metadata).toBeUndefined();
    } finally {
      await bare.close();
    }
  });

  it('names the skills an agent has when a reference names another', async () => {
    expect(message(await call('a2a:echo#ecoh', 'hi'))).toContain(
      'A2A agent "echo" has no skill "ecoh" (did you mean "echo"?)',
    );
  });
});

describe('a2a: references at load time', () => {
  it('reports an agent name the file does not define, with the names it does', () => {
    const dir = tempDir();
    const problems = problemsIn(dir, {
      name: 'x',
      desc: 'd',
      a2aAgents: { research: { url: 'https://agents.example/research' } },
      nodes: [{ type: 'tool', tool_name: 'a2a:reserch', tool_args: { message: 'm' } }],
    });
    expect(problems.join('\n')).toContain('no A2A agent named "reserch" (did you mean "research"?)');
  });

  it('rejects malformed references and agent entries', () => {
    const dir = tempDir();
    const text = problemsIn(dir, {
      name: 'x',
      desc: 'd',
      nodes: [
        { name: 'A', type: 'tool', tool_name: 'a2a:ftp://x.example/', tool_args: {}, next: 'B' },
        { name: 'B', type: 'tool', tool_name: 'a2a:https://u:p@x.example/', tool_args: {}, next: 'C' },
        { name: 'C', type: 'tool', tool_name: 'a2a:x#', tool_args: {} },
      ],
    }).join('\n');
    expect(text).toContain('an agent URL must be http:// or https://, not ftp:');
    expect(text).toContain('put credentials in the "headers" of an a2aAgents entry, not in the URL');
    expect(text).toContain('"a2a:x#" must be a2a:<agent name>');
    const entry = problemsIn(dir, {
      name: 'x',
      desc: 'd',
      a2aAgents: { bad: { url: 'ftp://agents.example/x' }, 'no spaces': { url: 'https://a.example' } },
      nodes: [{ type: 'tool', tool_name: 'a2a:bad', tool_args: { message: 'm' } }],
    }).join('\n');
    expect(entry).toMatch(/a2aAgents\/bad\/url: must be a URL/);
    expect(entry).toContain('an agent name may contain only letters, digits, _, - and .');
  });
});
