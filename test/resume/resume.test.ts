/**
 * runs resume through the built CLI against the fake OpenAI server: a run killed or failed in the
 * middle goes on from where it stopped, without paying again for the nodes that finished.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, startCli, tempDir } from '../helpers.js';

const { openai } = fakeVendors();
const KEY = 'sk-resume-secret-123456';

let dir: string;
let state: string;
const env = () => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openai.baseURL });

function write(name: string, def: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(def));
  return file;
}

/** Runs the CLI in the test folder with the fake server's key and base URL. */
const cli = (args: string[], extra: Record<string, string> = {}) =>
  runCli([...args, '--state', state], { cwd: dir, env: { ...env(), ...extra } });

/** The user text of each request the fake server received, in order. */
const asked = () =>
  openai.requests.map((r) => {
    const msgs = r.body.messages as { role: string; content: string }[];
    return msgs.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  });

async function onlyRunId(): Promise<string> {
  const list = await cli(['runs', 'list', '--json']);
  expect(list.code).toBe(0);
  const runs = JSON.parse(list.stdout) as { id: string }[];
  expect(runs).toHaveLength(1);
  return runs[0]!.id;
}

const drone = (name: string, prompt: string, next?: string) => ({
  name,
  model: 'openai:gpt-test',
  usr_prompt: prompt,
  ...(next ? { next } : {}),
});

/** A chain A -> B -> C -> D, each prompt quoting the previous output. */
const chain = {
  name: 'chain',
  desc: 'four drones in a row',
  nodes: [
    drone('A', 'A gets {{ ctx.input }}', 'B'),
    drone('B', 'B after {{ out.A }}', 'C'),
    drone('C', 'C after {{ out.B }}', 'D'),
    drone('D', 'D after {{ out.C }}'),
  ],
};

const fail = { status: 400, message: 'the fake model refuses' };

beforeEach(() => {
  dir = tempDir('hatchery-resume-');
  state = path.join(dir, 'state');
  openai.reset();
});

async function waitFor(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The journal text of the one run in the state folder. */
function journalText(): string {
  const files = existsSync(state) ? readdirSync(state).filter((f) => f.endsWith('.jsonl')) : [];
  return files.length === 1 ? readFileSync(path.join(state, files[0]!), 'utf8') : '';
}

describe('runs resume', () => {
  it('resumes a run killed with SIGKILL during node C: no request for A and B, the right output', async () => {
    const file = write('chain.json', chain);
    openai.enqueue('a-out', 'b-out', { text: 'never sent', delayMs: 60_000 });
    const p = startCli(['run', file, '--input', 'go', '--state', state, '-q'], { cwd: dir, env: env() });
    p.child.stdin.end();
    await waitFor(() => openai.requests.length === 3, "C's model call");
    // B's node_end reaches the file within one turn of the event loop of the run.
    await waitFor(
      () => /"type":"node_end","node":"B"|"node":"B".*"type":"node_end"/.test(journalText()),
      'B in the journal',
    );
    p.child.kill('SIGKILL');
    await p.exit;
    const id = await onlyRunId();

    openai.reset();
    openai.enqueue('c-out', 'd-out');
    const res = await cli(['runs', 'resume', id, '-q']);
    expect(res.stderr).toBe('');
    expect(res).toMatchObject({ code: 0, stdout: 'd-out\n' });
    // Only C and D were asked, C with B's recorded output.
    expect(asked()).toEqual(['C after b-out', 'D after c-out']);

    const show = JSON.parse((await cli(['runs', 'show', id, '--json'])).stdout);
    expect(show).toMatchObject({ id, status: 'succeeded', attempts: 2, output: 'd-out' });
  });

  it('refuses after an edit of the file, naming the node, and --force runs from the changed node', async () => {
    const file = write('chain.json', chain);
    openai.enqueue('a-out', 'b-out', fail);
    const first = await cli(['run', file, '--input', 'go', '-q']);
    expect(first.code).toBe(1);
    const id = await onlyRunId();
    const edited = structuredClone(chain);
    edited.nodes[1] = drone('B', 'B (edited) after {{ out.A }}', 'C');
    write('chain.json', edited);

    openai.reset();
    const refused = await cli(['runs', 'resume', id, '-q']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('changed since run');
    expect(refused.stderr).toContain('changed: B');
    expect(refused.stderr).toContain('--force');
    expect(openai.requests).toHaveLength(0);

    openai.enqueue('b2', 'c2', 'd2');
    const forced = await cli(['runs', 'resume', id, '--force', '-q']);
    expect(forced).toMatchObject({ code: 0, stdout: 'd2\n' });
    expect(asked()).toEqual(['B (edited) after a-out', 'C after b2', 'D after c2']);
  });

  it('--from NODE runs a finished run again from that node', async () => {
    const file = write('chain.json', chain);
    openai.enqueue('a-out', 'b-out', 'c-out', 'd-out');
    expect((await cli(['run', file, '--input', 'go', '-q'])).code).toBe(0);
    const id = await onlyRunId();
    openai.reset();
    // Without --from a succeeded run has nothing to resume.
    const done = await cli(['runs', 'resume', id, '-q']);
    expect(done.code).toBe(1);
    expect(done.stderr).toContain('already succeeded');

    openai.enqueue('c-new', 'd-new');
    const res = await cli(['runs', 'resume', id, '--from', 'C']);
    expect(res).toMatchObject({ code: 0, stdout: 'd-new\n' });
    // Progress says which nodes came from the journal.
    expect(res.stderr).toContain(
      '[1] A (from the journal)\n[2] B (from the journal)\n[3] C started (drone)\n',
    );
    expect(res.stderr).toMatch(/\n\[3\] C \((\d+ ms|\d+(\.\d+)? s)/);
    expect(asked()).toEqual(['C after b-out', 'D after c-new']);

    const bad = await cli(['runs', 'resume', id, '--from', 'Nope', '-q']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('no node named "Nope"');
  });

  it('does not run a finished script node again: its side effect happens once', async () => {
    const log = path.join(dir, 'log.txt');
    const file = write('side.json', {
      name: 'side',
      desc: 'a side effect, then a model',
      nodes: [
        {
          name: 'Append',
          type: 'script',
          cmd: ['sh', '-c', `echo ran >> '${log}'; echo appended`],
          next: 'Ask',
        },
        drone('Ask', 'after {{ out.Append }}'),
      ],
    });
    openai.enqueue(fail);
    expect((await cli(['run', file, '--input', 'go', '-q'])).code).toBe(1);
    expect(readFileSync(log, 'utf8')).toBe('ran\n');
    const id = await onlyRunId();
    openai.reset();
    openai.enqueue('asked');
    const res = await cli(['runs', 'resume', id, '-q']);
    expect(res).toMatchObject({ code: 0, stdout: 'asked\n' });
    expect(readFileSync(log, 'utf8')).toBe('ran\n');
    expect(asked()).toEqual(['after appended\n']);
  });

  it('resumes a parallel node whose branches partly finished: only the missing branch runs', async () => {
    const file = write('fan.json', {
      name: 'fan',
      desc: 'two branches',
      nodes: [
        { name: 'Both', type: 'parallel', branches: ['P1', 'P2'], next: 'Sum' },
        drone('P1', 'one {{ ctx.input }}'),
        drone('P2', 'two {{ ctx.input }}'),
        drone('Sum', 'sum {{ out.P1 }} {{ out.P2 }}'),
      ],
    });
    // P2 fails only after P1 has answered, so P1 is recorded as finished.
    const route = (body: { messages: { content: string }[] }) =>
      JSON.stringify(body.messages).includes('two go') ? { ...fail, delayMs: 300 } : 'p1-out';
    openai.enqueue(route, route);
    expect((await cli(['run', file, '--input', 'go', '-q'])).code).toBe(1);
    const id = await onlyRunId();
    openai.reset();
    openai.enqueue('p2-out', 'total');
    const res = await cli(['runs', 'resume', id, '-q']);
    expect(res).toMatchObject({ code: 0, stdout: 'total\n' });
    expect(asked()).toEqual(['two go', 'sum p1-out p2-out']);
  });
});

describe('run --replay-run', () => {
  it('re-runs a past run from its journal with no API key and no reachable server', async () => {
    const file = write('chain.json', chain);
    openai.enqueue('a-out', 'b-out', 'c-out', 'd-out');
    const live = await cli(['run', file, '--input', 'go', '--json']);
    expect(live.code).toBe(0);
    const id = await onlyRunId();
    const n = openai.requests.length;
    const offline = {
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
    };
    const rep = await runCli(
      ['run', file, '--input', 'go', '--replay-run', id.slice(0, 8), '--state', state, '--json'],
      { cwd: dir, env: offline },
    );
    expect(rep.stderr).not.toContain('error');
    expect(rep.code).toBe(0);
    expect(JSON.parse(rep.stdout).output).toBe('d-out');
    expect(JSON.parse(rep.stdout).output).toBe(JSON.parse(live.stdout).output);
    expect(openai.requests).toHaveLength(n);

    // Another input asks another question: the journal does not hold it.
    const other = await runCli(['run', file, '--input', 'other', '--replay-run', id, '--state', state], {
      cwd: dir,
      env: offline,
    });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      `no recorded answer for this model call of node "A" in the journal of run ${id}`,
    );
  });

  it('answers http_request calls from the journal too: the server is not asked again', async () => {
    let hits = 0;
    const server = createServer((req, res) => {
      hits++;
      res.end(`weather for ${req.url}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const file = write('weather.json', {
        name: 'weather',
        desc: 'fetches, then asks',
        nodes: [
          {
            name: 'Fetch',
            type: 'tool',
            tool_name: 'http_request',
            tool_args: { url: `${url}/paris`, headers: { Authorization: 'Bearer secret-token-abcdef' } },
            next: 'Tell',
          },
          drone('Tell', 'tell {{ out.Fetch }}'),
        ],
      });
      openai.enqueue('sunny');
      const live = await cli(['run', file, '--allow-private-network', '-q']);
      expect(live).toMatchObject({ code: 0, stdout: 'sunny\n' });
      expect(hits).toBe(1);
      expect(journalText()).not.toContain('secret-token-abcdef');
      const id = await onlyRunId();
      const rep = await runCli(
        ['run', file, '--replay-run', id, '--allow-private-network', '--state', state, '-q'],
        { cwd: dir, env: { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' } },
      );
      expect(rep).toMatchObject({ code: 0, stdout: 'sunny\n' });
      expect(hits).toBe(1);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
