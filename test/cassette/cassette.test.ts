/**
 * run --record / --replay / --record-missing through the built CLI, against the fake vendor servers:
 * what a user runs to put a workflow under test without a model.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, tempDir } from '../helpers.js';
import { echoServer } from '../tools/helpers.js';

const { openai, anthropic } = fakeVendors();
const KEY = 'sk-recording-secret-123456';
/** No key, and base URLs where nothing listens: a replay that reached the network would fail. */
const OFFLINE = { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' };

let dir: string;
const live = () => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openai.baseURL });
const lines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n');

function write(name: string, def: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(def));
  return file;
}

const greet = {
  name: 'greet',
  desc: 'Greets',
  nodes: [{ name: 'Greet', model: 'openai:gpt-test', usr_prompt: 'Say hi to {{ ctx.input }}' }],
};

beforeEach(() => {
  dir = tempDir('hatchery-cassette-');
  openai.reset();
  anthropic.reset();
});

describe('run --record, then --replay', () => {
  it('replays the recorded answer with no API key and no reachable server', async () => {
    const file = write('greet.json', greet);
    const cas = path.join(dir, 'greet.jsonl');
    openai.enqueue('Hi Ada!');
    const rec = await runCli(['run', file, '--input', 'Ada', '--record', cas, '-q'], { env: live() });
    expect(rec).toMatchObject({ code: 0, stdout: 'Hi Ada!\n' });
    expect(openai.requests).toHaveLength(1);

    const first = JSON.parse(lines(cas)[0]!);
    expect(first).toMatchObject({ format: 'hatchery-cassette', version: 1 });
    const entry = JSON.parse(lines(cas)[1]!);
    expect(entry).toMatchObject({
      type: 'model',
      node: 'Greet',
      request: {
        vendor: 'openai',
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'Say hi to Ada' }],
      },
      response: {
        text: 'Hi Ada!',
        usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
      },
    });
    expect(entry.key).toMatch(/^[0-9a-f]{16}$/);

    const rep = await runCli(['run', file, '--input', 'Ada', '--replay', cas, '--json'], { env: OFFLINE });
    expect(rep.code).toBe(0);
    expect(JSON.parse(rep.stdout)).toMatchObject({ output: 'Hi Ada!', usage: entry.response.usage });
    expect(openai.requests).toHaveLength(1);
  });

  it('answers from the cassette, not the server: an edited cassette changes the output', async () => {
    const file = write('greet.json', greet);
    const cas = path.join(dir, 'greet.jsonl');
    openai.enqueue('Hi Ada!');
    await runCli(['run', file, '--input', 'Ada', '--record', cas, '-q'], { env: live() });
    writeFileSync(cas, readFileSync(cas, 'utf8').replace('Hi Ada!', 'Edited in the cassette'));
    const rep = await runCli(['run', file, '--input', 'Ada', '--replay', cas, '-q'], {
      env: { ...live(), ...OFFLINE },
    });
    expect(rep).toMatchObject({ code: 0, stdout: 'Edited in the cassette\n' });
  });

  it('fails a request the cassette lacks, naming the node and showing a diff against the nearest one', async () => {
    const file = write('greet.json', greet);
    const cas = path.join(dir, 'greet.jsonl');
    openai.enqueue('Hi Ada!');
    await runCli(['run', file, '--input', 'Ada', '--record', cas, '-q'], { env: live() });
    const rep = await runCli(['run', file, '--input', 'Grace', '--replay', cas, '-q'], { env: OFFLINE });
    expect(rep.code).toBe(1);
    expect(rep.stdout).toBe('');
    expect(rep.stderr).toBe(
      `error [NOT_FOUND]: ${file}: node "Greet": no recorded answer for this model call of node "Greet" in cassette ${cas}; record it with --record-missing (or record the cassette again)
nearest recorded request (node "Greet") differs (- recorded, + this run):
      {
-       "content": "Say hi to Ada",
+       "content": "Say hi to Grace",
        "role": "user"
`,
    );
  });

  it('--record-missing makes the missing call, appends it, and the next replay needs no network', async () => {
    const file = write('greet.json', greet);
    const cas = path.join(dir, 'greet.jsonl');
    openai.enqueue('Hi Ada!', 'Hi Grace!');
    await runCli(['run', file, '--input', 'Ada', '--record', cas, '-q'], { env: live() });
    expect(lines(cas)).toHaveLength(2);
    const fill = await runCli(['run', file, '--input', 'Grace', '--replay', cas, '--record-missing', '-q'], {
      env: live(),
    });
    expect(fill).toMatchObject({ code: 0, stdout: 'Hi Grace!\n' });
    expect(lines(cas)).toHaveLength(3);
    // A call the cassette holds is still answered from it, not from the server.
    const again = await runCli(['run', file, '--input', 'Ada', '--replay', cas, '--record-missing', '-q'], {
      env: live(),
    });
    expect(again).toMatchObject({ code: 0, stdout: 'Hi Ada!\n' });
    expect(openai.requests).toHaveLength(2);
    expect(lines(cas)).toHaveLength(3);
    for (const who of ['Ada', 'Grace']) {
      const r = await runCli(['run', file, '--input', who, '--replay', cas, '-q'], { env: OFFLINE });
      expect(r).toMatchObject({ code: 0, stdout: `Hi ${who}!\n` });
    }
  });

  it('answers identical requests of a loop in recorded order, and fails the one call too many', async () => {
    const counter = {
      name: 'counter',
      desc: 'Counts',
      model: 'openai:gpt-test',
      nodes: [
        { name: 'Count', type: 'loop', body: 'Next', until: 'three', max_iterations: 5 },
        { name: 'Next', usr_prompt: 'Say the next number.' },
      ],
    };
    const file = write('counter.json', counter);
    const cas = path.join(dir, 'counter.jsonl');
    openai.enqueue('one', 'two', 'three');
    const rec = await runCli(['run', file, '--record', cas, '-q'], { env: live() });
    expect(rec).toMatchObject({ code: 0, stdout: 'three\n' });
    const keys = lines(cas)
      .slice(1)
      .map((l) => JSON.parse(l).key);
    expect(new Set(keys).size).toBe(1);
    const rep = await runCli(['run', file, '--replay', cas, '-q'], { env: OFFLINE });
    expect(rep).toMatchObject({ code: 0, stdout: 'three\n' });

    // Drop the last answer: the third identical call now misses, and says why.
    writeFileSync(cas, `${lines(cas).slice(0, 3).join('\n')}\n`);
    const short = await runCli(['run', file, '--replay', cas, '-q'], { env: OFFLINE });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('no recorded answer for this model call of node "Next"');
    expect(short.stderr).toContain('an identical request was recorded, but this run made it more often');
  });

  it('keeps secrets out of the cassette, and the key does not change the request key', async () => {
    const file = write('greet.json', {
      ...greet,
      nodes: [{ ...greet.nodes[0], usr_prompt: 'Say hi to {{ ctx.input }} (key {{ ctx.input }})' }],
    });
    const cas = path.join(dir, 'greet.jsonl');
    openai.enqueue(`Your key is ${KEY}`);
    await runCli(['run', file, '--input', KEY, '--record', cas, '-q'], { env: live() });
    const text = readFileSync(cas, 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).toContain('Say hi to [redacted]');
    expect(text).toContain('Your key is [redacted]');
    // Another key: the same (redacted) request, so the same key of the entry.
    const other = 'sk-another-secret-654321';
    const rep = await runCli(['run', file, '--input', other, '--replay', cas, '-q'], {
      env: { OPENAI_API_KEY: other, OPENAI_BASE_URL: OFFLINE.OPENAI_BASE_URL },
    });
    expect(rep).toMatchObject({ code: 0, stdout: 'Your key is [redacted]\n' });
  });

  it('covers Anthropic and streaming calls, and the model a file leaves to the key', async () => {
    const file = write('stream.json', {
      name: 'stream',
      desc: 'Streams',
      nodes: [{ name: 'Talk', usr_prompt: 'Tell me about {{ ctx.input }}', stream: true }],
    });
    const cas = path.join(dir, 'stream.jsonl');
    anthropic.enqueue('Streams flow.');
    const rec = await runCli(['run', file, '--input', 'rivers', '--record', cas, '-q'], {
      env: { ANTHROPIC_API_KEY: 'sk-ant-recording-123456', ANTHROPIC_BASE_URL: anthropic.baseURL },
    });
    expect(rec).toMatchObject({ code: 0, stdout: 'Streams flow.\n' });
    expect(JSON.parse(lines(cas)[1]!).request.vendor).toBe('anthropic');
    // No key at all: the model recorded for the node is used.
    const rep = await runCli(['run', file, '--input', 'rivers', '--replay', cas, '-q'], { env: OFFLINE });
    expect(rep).toMatchObject({ code: 0, stdout: 'Streams flow.\n' });
  });

  it('refuses --record with --replay, and --record-missing alone (exit 2)', async () => {
    const file = write('greet.json', greet);
    const both = await runCli(['run', file, '--record', 'a.jsonl', '--replay', 'b.jsonl'], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--record and --replay exclude each other');
    const alone = await runCli(['run', file, '--record-missing'], { cwd: dir });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--record-missing needs --replay FILE');
  });

  it('a missing or foreign cassette is an error naming the file', async () => {
    const file = write('greet.json', greet);
    const missing = await runCli(['run', file, '--replay', path.join(dir, 'none.jsonl')], { env: OFFLINE });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`cannot read cassette ${path.join(dir, 'none.jsonl')}: ENOENT`);
    writeFileSync(path.join(dir, 'bad.jsonl'), '{"hello":1}\n');
    const bad = await runCli(['run', file, '--replay', path.join(dir, 'bad.jsonl')], { env: OFFLINE });
    expect(bad.stderr).toContain('bad.jsonl:1: not a hatchery cassette');
  });
});

describe('tool calls in cassettes', () => {
  let server: Server;
  let url = '';
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      res.end(`weather for ${req.url} (auth ${req.headers.authorization ? 'yes' : 'no'})`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('records http_request calls (headers redacted) and replays them without the server', async () => {
    const file = write('weather.json', {
      name: 'weather',
      desc: 'Fetches',
      nodes: [
        {
          name: 'Fetch',
          type: 'tool',
          tool_name: 'http_request',
          tool_args: { url: `${url}/paris`, headers: { Authorization: 'Bearer secret-token-abcdef' } },
        },
      ],
    });
    const cas = path.join(dir, 'weather.jsonl');
    hits = 0;
    const rec = await runCli(['run', file, '--record', cas, '--allow-private-network', '-q']);
    expect(rec.code).toBe(0);
    expect(rec.stdout).toContain('weather for /paris (auth yes)');
    const entry = JSON.parse(lines(cas)[1]!);
    expect(entry).toMatchObject({
      type: 'tool',
      node: 'Fetch',
      request: {
        tool: 'http_request',
        args: { url: `${url}/paris`, headers: { Authorization: '[redacted]' } },
      },
    });
    expect(readFileSync(cas, 'utf8')).not.toContain('secret-token-abcdef');
    const rep = await runCli(['run', file, '--replay', cas, '--allow-private-network', '-q']);
    expect(rep).toMatchObject({ code: 0, stdout: rec.stdout });
    expect(hits).toBe(1);
  });

  it('records MCP tool calls, and replays them from the cassette', async () => {
    const file = write('mcp.json', {
      name: 'mcp_echo',
      desc: 'Echoes over MCP',
      mcpServers: { echo: echoServer() },
      nodes: [
        { name: 'Say', type: 'tool', tool_name: 'mcp:echo/echo', tool_args: { text: 'from the server' } },
      ],
    });
    const cas = path.join(dir, 'mcp.jsonl');
    const rec = await runCli(['run', file, '--record', cas, '-q']);
    expect(rec).toMatchObject({ code: 0, stdout: 'from the server\n' });
    expect(JSON.parse(lines(cas)[1]!)).toMatchObject({
      type: 'tool',
      node: 'Say',
      request: { tool: 'mcp:echo/echo', name: 'echo', args: { text: 'from the server' } },
      response: { text: 'from the server' },
    });
    writeFileSync(
      cas,
      readFileSync(cas, 'utf8').replace(
        '"response":{"text":"from the server"',
        '"response":{"text":"from the cassette"',
      ),
    );
    const rep = await runCli(['run', file, '--replay', cas, '-q']);
    expect(rep).toMatchObject({ code: 0, stdout: 'from the cassette\n' });
  });

  it('does not record a nested hatch: run as one tool call: its inner model calls are recorded', async () => {
    write('inner.json', greet);
    const file = write('outer.json', {
      name: 'outer',
      desc: 'Nests',
      nodes: [{ name: 'Call', type: 'tool', tool_name: 'hatch:inner.json', tool_args: { input: 'Ada' } }],
    });
    const cas = path.join(dir, 'outer.jsonl');
    openai.enqueue('Hi Ada!');
    const rec = await runCli(['run', file, '--record', cas, '-q'], { env: live() });
    expect(rec).toMatchObject({ code: 0, stdout: 'Hi Ada!\n' });
    const entries = lines(cas)
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(entries.map((e) => [e.type, e.node])).toEqual([['model', 'Greet']]);
    const rep = await runCli(['run', file, '--replay', cas, '-q'], { env: OFFLINE });
    expect(rep).toMatchObject({ code: 0, stdout: 'Hi Ada!\n' });
  });
});

describe('a tool call a drone makes that the cassette lacks', () => {
  it('fails the run with the tool call and its diff, not with the model call that follows', async () => {
    const def = (server: string) => ({
      name: 'agent',
      desc: 'Calls a tool',
      model: 'openai:gpt-test',
      mcpServers: { [server]: echoServer() },
      nodes: [{ name: 'Agent', usr_prompt: 'Echo hello', tools: [`mcp:${server}`] }],
    });
    const file = write('agent.json', def('echo'));
    const cas = path.join(dir, 'agent.jsonl');
    openai.enqueue({ toolCalls: [{ name: 'echo', args: { text: 'hello' } }] }, 'It said hello.');
    const rec = await runCli(['run', file, '--record', cas, '-q'], { env: live() });
    expect(rec).toMatchObject({ code: 0, stdout: 'It said hello.\n' });
    expect(
      lines(cas)
        .slice(1)
        .map((l) => JSON.parse(l).type),
    ).toEqual(['model', 'tool', 'model']);

    write('agent.json', def('other'));
    const rep = await runCli(['run', file, '--replay', cas, '-q'], { env: OFFLINE });
    expect(rep.code).toBe(1);
    expect(rep.stderr).toContain(
      `no recorded answer for this tool call "echo" of node "Agent" in cassette ${cas}`,
    );
    expect(rep.stderr).toContain('-   "tool": "mcp:echo/echo"\n+   "tool": "mcp:other/echo"');
  });
});
