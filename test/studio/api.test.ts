import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { events, type Frame, openStudio, raw, SECRET_KEY } from './helpers.js';

const hello = {
  name: 'hello',
  desc: 'says hello',
  inputs: { tone: 'How to say it' },
  nodes: [{ name: 'Answer', sys_prompt: 'Be brief.', usr_prompt: '{{ ctx.tone }}: {{ ctx.input }}' }],
};

let open: Awaited<ReturnType<typeof openStudio>> | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** Waits until the run's journal says it ended with `status`. */
async function ended(s: NonNullable<typeof open>, id: string, status: string) {
  for (let i = 0; i < 200; i++) {
    const d = await s.json(`/api/runs/${id}`);
    if (d.status === status && d.summary?.status === status) return d;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${id} never reached ${status}`);
}

describe('studio access', () => {
  it('refuses requests without the token or with a wrong one (401), and moves a right one to a cookie', async () => {
    open = await openStudio({ 'hello.json': hello });
    const { port, token, cookie: studioCookie } = open.studio;
    const host = { host: `127.0.0.1:${port}` };
    for (const path of ['/', '/app.js', '/api/hatcheries', '/api/runs', '/api/events']) {
      expect((await raw(port, { path, headers: host })).status).toBe(401);
      expect((await raw(port, { path: `${path}?token=${'0'.repeat(32)}`, headers: host })).status).toBe(401);
      const cookie = { ...host, cookie: `${studioCookie.slice(0, -1)}x` };
      expect((await raw(port, { path, headers: cookie })).status).toBe(401);
    }
    const first = await raw(port, { path: `/?token=${token}`, headers: host });
    expect(first.status).toBe(303);
    expect(first.headers['set-cookie']).toEqual([`${studioCookie}; HttpOnly; SameSite=Strict; Path=/`]);
    const page = await raw(port, {
      path: '/',
      headers: { ...host, cookie: studioCookie },
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/app.js">');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    // The page fetches nothing from outside: no URL of another host in its files.
    for (const f of ['/', '/app.js', '/style.css']) {
      const body = (await raw(port, { path: f, headers: { ...host, cookie: studioCookie } })).body;
      expect(body).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    }
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin with 403', async () => {
    open = await openStudio({ 'hello.json': hello });
    const { port, token, cookie } = open.studio;
    for (const host of [
      `evil.example:${port}`,
      '127.0.0.1',
      `127.0.0.1:${port + 1}`,
      `localhost.evil:${port}`,
    ]) {
      const res = await raw(port, { path: `/api/hatcheries?token=${token}`, headers: { host, cookie } });
      expect(res.status, host).toBe(403);
    }
    expect(
      (await raw(port, { path: '/api/hatcheries', headers: { host: `localhost:${port}`, cookie } })).status,
    ).toBe(200);
    const res = await raw(port, {
      path: '/api/runs',
      method: 'POST',
      headers: {
        host: `127.0.0.1:${port}`,
        cookie,
        origin: 'http://evil.example',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ hatchery: 'hello' }),
    });
    expect(res.status).toBe(403);
    expect(open.fake.requests).toHaveLength(0);
  });

  it('serves no file but its own: path traversal in static and run-id URLs is refused', async () => {
    open = await openStudio({ 'hello.json': hello });
    const { port, cookie } = open.studio;
    const headers = { host: `127.0.0.1:${port}`, cookie };
    for (const path of [
      '/../../../../etc/passwd',
      '/%2e%2e/%2e%2e/package.json',
      '/assets/../server.ts',
      '/..%2fserver.ts',
      '/hello.json',
      '/server.js',
    ]) {
      const res = await raw(port, { path, headers });
      expect(res.status, path).toBe(404);
      expect(res.body).not.toContain('root:');
    }
    for (const id of ['..%2F..%2F..%2Fetc%2Fpasswd', '..', '%2e%2e', 'not-a-run', `${'a'.repeat(36)}`]) {
      const res = await raw(port, { path: `/api/runs/${id}`, headers });
      expect(res.status, id).toBe(404);
      const post = await raw(port, {
        path: `/api/runs/${id}/cancel`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(post.status, id).toBe(404);
    }
  });

  it('starts runs only on a POST with a JSON body: a GET, a form or plain text starts nothing', async () => {
    open = await openStudio({ 'hello.json': hello });
    const { port, cookie } = open.studio;
    const headers = { host: `127.0.0.1:${port}`, cookie };
    const get = await raw(port, { path: '/api/runs?hatchery=hello&input=x', headers });
    expect(get.status).toBe(200);
    expect(JSON.parse(get.body).runs).toEqual([]);
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await raw(port, {
        path: '/api/runs',
        method: 'POST',
        headers: { ...headers, 'content-type': type },
        body: 'hatchery=hello',
      });
      expect(res.status, type).toBe(415);
    }
    const big = await open.post('/api/runs', { hatchery: 'hello', input: 'x'.repeat(1024 * 1024 + 1) });
    expect(big.status).toBe(413);
    const undeclared = await open.post('/api/runs', { hatchery: 'hello', vars: { nope: 'x' } });
    expect(undeclared.status).toBe(400);
    expect(((await undeclared.json()) as Frame['data']).error).toContain('declares no input "nope"');
    expect((await open.post('/api/runs', { hatchery: 'nope' })).status).toBe(400);
    expect(open.fake.requests).toHaveLength(0);
    expect((await open.json('/api/runs')).runs).toEqual([]);
  });
});

describe('studio live updates', () => {
  it('sends a file change over the event stream: problems with their line, then the fixed entry', async () => {
    open = await openStudio({ 'hello.json': hello });
    const sse = events(open.studio);
    await sse.open;
    const file = `${open.dir}/hello.json`;
    writeFileSync(
      file,
      '{\n  "name": "hello", "desc": "d",\n  "nodes": [\n    { "name": "A", "next": "Nowhere", "usr_prompt": "x" }\n  ]\n}\n',
    );
    const bad = await sse.waitFor((f) => f.type === 'folder' && f.data.problems.length > 0);
    const problem = bad.data.problems[0];
    expect(problem.file).toBe(file);
    expect(problem.problems[0]).toMatchObject({ path: 'nodes/0/next', line: 4 });
    expect(problem.problems[0].message).toContain('Nowhere');
    // The last good version is still served.
    const list = await open.json('/api/hatcheries');
    expect(list.hatcheries.map((h: { name: string }) => h.name)).toEqual(['hello']);
    expect(list.problems[0].file).toBe(file);
    writeFileSync(
      file,
      JSON.stringify({ ...hello, nodes: [...hello.nodes, { name: 'Second', usr_prompt: 'y' }] }),
    );
    const good = await sse.waitFor((f) => f.type === 'folder' && f.data.changed.length > 0);
    expect(good.data.problems).toEqual([]);
    expect(good.data.changed[0].nodeIds).toEqual({ Answer: 'n_Answer', Second: 'n_Second' });
    expect(good.data.changed[0].svg).toContain('data-id="n_Second"');
    sse.close();
  });

  it('streams a run as it goes, and draws the same tree from the journal afterwards', async () => {
    open = await openStudio({ 'hello.json': hello });
    const sse = events(open.studio);
    await sse.open;
    const res = await open.post('/api/runs', { hatchery: 'hello', input: 'world', vars: { tone: 'Warmly' } });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as Frame['data'];
    const end = await sse.waitFor(
      (f) => f.type === 'run_status' && f.data.runId === runId && f.data.status !== 'running',
    );
    expect(end.data).toMatchObject({ status: 'succeeded', output: 'echo: Warmly: world' });
    const types = sse.frames.filter((f) => f.type === 'run_event').map((f) => f.data.event.type);
    expect(types).toEqual(expect.arrayContaining(['node_start', 'model_call', 'node_end']));
    const live = await ended(open, runId, 'succeeded');
    const model = live.tree.children[0].children[0];
    expect(model.kind).toBe('model');
    expect(live.prompts[model.id].messages[0].content).toBe('Warmly: world');
    // The same tree, rebuilt from the journal alone (what a restarted studio shows).
    const { treeOf } = await import('../../src/studio/runs.js');
    const stored = await open.runtime.store!.read(runId);
    const { tree, prompts } = treeOf(stored!, []);
    expect(tree.root.status).toBe('done');
    expect(tree.root.children.map((c) => [c.label, c.status, c.output])).toEqual([
      ['Answer', 'done', 'echo: Warmly: world'],
    ]);
    expect(tree.root.children[0]?.children.map((c) => [c.id, c.kind])).toEqual([[model.id, 'model']]);
    expect(prompts).toEqual(live.prompts);
    sse.close();
  });

  it('reads a past run whose journal has a damaged line: the rest of the run is shown', async () => {
    open = await openStudio({ 'hello.json': hello });
    const body = { hatchery: 'hello', input: 'a', vars: { tone: 'b' } };
    const { runId } = (await (await open.post('/api/runs', body)).json()) as Frame['data'];
    await ended(open, runId, 'succeeded');
    await open.close();
    appendFileSync(`${open.state}/${runId}.jsonl`, '{"v":1,"type":"node_end","output":\n');
    // A fresh studio on the same journal: the run comes from the journal alone, prompts included.
    open = await openStudio({ 'hello.json': hello }, { state: open.state });
    const d = await open.json(`/api/runs/${runId}`);
    expect(d.summary.corruptLines).toBe(1);
    expect(d.tree.children[0]).toMatchObject({ label: 'Answer', status: 'done', output: 'echo: b: a' });
    const model = d.tree.children[0].children[0];
    expect(d.prompts[model.id]).toMatchObject({
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'b: a' }],
    });
    expect((await open.json('/api/runs')).runs.map((r: { id: string }) => r.id)).toEqual([runId]);
  });

  it('marks a run whose process died as interrupted when it starts, so it can be resumed', async () => {
    const state = (await import('../helpers.js')).tempDir('studio-dead-');
    const { FileRunStore } = await import('../../src/journal/file-store.js');
    const { hostname } = await import('node:os');
    const store = new FileRunStore(state);
    const id = '0b0e3d9e-6a57-4c1e-9d39-3f1f5a0c2a11';
    const journal = store.create({
      id,
      hatchery: 'hello',
      file: '/nowhere/hello.json',
      hash: '0'.repeat(16),
      nodes: {},
      source: 'cli',
      startedAt: Date.now(),
      // A process that is gone: no live process has this pid.
      owner: { pid: 2 ** 22 + 17, host: hostname(), since: 1 },
    });
    await journal.flush();
    open = await openStudio({ 'hello.json': hello }, { state });
    const runs = (await open.json('/api/runs')).runs;
    expect(runs.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([[id, 'interrupted']]);
  });

  it('cancels a running run, and answers a suspended ask by resuming it', async () => {
    open = await openStudio({ 'hello.json': hello, 'pick.json': pick }, { latencyMs: 5_000 });
    const slow = { hatchery: 'hello', input: 'slow', vars: { tone: 'Slowly' } };
    const { runId } = (await (await open.post('/api/runs', slow)).json()) as Frame['data'];
    for (let i = 0; i < 100 && open.fake.requests.length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(
      (await (await open.post(`/api/runs/${runId}/cancel`, {})).json()) as Frame['data'] as Frame['data'],
    ).toEqual({ cancelled: true });
    await ended(open, runId, 'cancelled');

    const asked = (
      (await (await open.post('/api/runs', { hatchery: 'pick', input: 'the door' })).json()) as Frame['data']
    ).runId;
    const waiting = await ended(open, asked, 'input_required');
    expect(waiting.summary.question).toMatchObject({ node: 'Pick', question: 'Which colour for the door?' });
    expect((await open.post(`/api/runs/${asked}/resume`, { answer: 'green' })).status).toBe(202);
    let second: { status: string; summary: { attempts: number; error: string } } | undefined;
    for (let i = 0; i < 100 && !second; i++) {
      const d = await open.json(`/api/runs/${asked}`);
      if (d.status !== 'running' && d.summary.attempts === 2) {
        second = d;
        // An answer that is not one of the choices leaves the run waiting, saying why.
        expect(d.status).toBe('input_required');
        expect(d.summary.error).toContain('"green" is not one of the choices');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(second?.summary.attempts).toBe(2);
    expect((await open.post(`/api/runs/${asked}/resume`, { answer: 'blue' })).status).toBe(202);
    const done = await ended(open, asked, 'succeeded');
    expect(done.summary.output).toBe('painted blue');
  });
});

describe('studio secrets', () => {
  it('never sends the API key: not from a prompt, a description, an input or a model reply', async () => {
    const leaky = {
      name: 'leaky',
      desc: `uses ${SECRET_KEY} for nothing`,
      nodes: [
        {
          name: 'Leak',
          sys_prompt: `The key is ${SECRET_KEY}.`,
          usr_prompt: `{{ ctx.input }} ${SECRET_KEY}`,
        },
      ],
    };
    open = await openStudio({
      'leaky.json': leaky,
      'broken.json': `{"name": "broken", "desc": "${SECRET_KEY}", "nodes": 3}`,
    });
    open.fake.enqueue({ text: `here it is: ${SECRET_KEY}` });
    const sse = events(open.studio);
    await sse.open;
    const bodies: string[] = [];
    const { runId } = (await (
      await open.post('/api/runs', { hatchery: 'leaky', input: SECRET_KEY })
    ).json()) as Frame['data'];
    await sse.waitFor(
      (f) => f.type === 'run_status' && f.data.runId === runId && f.data.status !== 'running',
    );
    const detail = await ended(open, runId, 'succeeded');
    // The model did get the prompt (a run works as `run` does); the page never sees the key.
    expect(JSON.stringify(open.fake.requests[0]?.body)).toContain(SECRET_KEY);
    bodies.push(JSON.stringify(detail));
    for (const p of ['/api/hatcheries', '/api/runs', `/api/runs/${runId}`, '/', '/app.js'])
      bodies.push(await (await open.get(p)).text());
    bodies.push(sse.all());
    // The journal too: the prompts the studio adds to it are redacted like the rest.
    bodies.push(readFileSync(`${open.state}/${runId}.jsonl`, 'utf8'));
    for (const b of bodies) expect(b).not.toContain(SECRET_KEY);
    expect(bodies.join('')).toContain('[redacted]');
    expect(JSON.stringify(detail.prompts)).toContain('The key is [redacted]');
    sse.close();
  });
});
