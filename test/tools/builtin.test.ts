import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { ToolContext } from '../../src/engine/contracts.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { HTTP_LIMIT_BYTES } from '../../src/tools/builtin/http.js';
import { BUILTIN_TOOLS } from '../../src/tools/builtin/index.js';
import { tempDir } from '../helpers.js';
import { callTool, loadIn, Scripted, toolResults } from './helpers.js';

const rt = (extra: ConstructorParameters<typeof Runtime>[0] = {}) =>
  new Runtime({ providers: { openai: new Scripted([]) }, env: {}, ...extra });

/** Runs one baneling call of a built-in and returns the run's output. */
async function baneling(
  tool: string,
  args: Record<string, unknown>,
  opts: { dir?: string; allowShell?: boolean; input?: string } = {},
) {
  const dir = opts.dir ?? tempDir();
  const h = loadIn(dir, {
    name: 'b',
    desc: 'd',
    nodes: [{ type: 'tool', tool_name: tool, tool_args: args }],
  });
  return (await rt({ tools: { allowShell: opts.allowShell } }).run(h, { input: opts.input ?? '' })).output;
}

describe('list_dir', () => {
  it('lists a folder, recursively on request, and stays inside the roots', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'sub/deeper'), { recursive: true });
    writeFileSync(path.join(dir, 'sub/a.txt'), 'a');
    writeFileSync(path.join(dir, 'sub/deeper/b.txt'), 'b');
    expect(await baneling('list_dir', { path: 'sub' }, { dir })).toBe('a.txt\ndeeper/');
    expect(await baneling('list_dir', { path: 'sub', recursive: true }, { dir })).toBe(
      'a.txt\ndeeper/\ndeeper/b.txt',
    );
    expect((await baneling('list_dir', {}, { dir })).split('\n')).toEqual(['main.json', 'sub/']);
    await expect(baneling('list_dir', { path: '..' }, { dir })).rejects.toMatchObject({
      code: 'PATH_DENIED',
    });
    await expect(baneling('list_dir', { path: 'nope' }, { dir })).rejects.toThrow(/no such folder/);
  });
});

describe('http_request', () => {
  let url = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.url === '/big') {
        res.end('b'.repeat(HTTP_LIMIT_BYTES + 5000));
      } else if (req.url === '/missing') {
        res.statusCode = 404;
        res.end('not here');
      } else {
        res.end(`${req.method} ${req.url} ${req.headers['x-test'] ?? ''} ${body}`);
      }
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const tool = BUILTIN_TOOLS.get('http_request')!;
  // The test server is on loopback, which http_request refuses unless the operator opts in.
  const tc = {
    signal: new AbortController().signal,
    node: 'n',
    scope: { shared: { services: { network: { allowPrivateNetwork: true } } } },
  } as unknown as ToolContext;

  it('GETs and POSTs with headers and a body', async () => {
    expect((await tool.call({ url: `${url}/x?q=1` }, tc)).text).toBe('GET /x?q=1  ');
    const post = await tool.call(
      { url: `${url}/p`, method: 'POST', body: 'data', headers: { 'x-test': 'h' } },
      tc,
    );
    expect(post.text).toBe('POST /p h data');
  });

  it('caps big responses with a note, and marks error statuses', async () => {
    const big = await tool.call({ url: `${url}/big` }, tc);
    expect(big.text.length).toBeLessThan(HTTP_LIMIT_BYTES + 100);
    expect(big.text).toMatch(/\[response cut at 200000 bytes\]$/);
    expect(await tool.call({ url: `${url}/missing` }, tc)).toEqual({
      text: 'HTTP 404 Not Found\nnot here',
      isError: true,
    });
  });

  it('refuses other schemes, bad URLs and a body on GET', async () => {
    await expect(tool.call({ url: 'file:///etc/passwd' }, tc)).rejects.toThrow(/only http and https/);
    await expect(tool.call({ url: 'not a url' }, tc)).rejects.toThrow(/not a valid URL/);
    await expect(tool.call({ url, body: 'x' }, tc)).rejects.toThrow(/GET request has no body/);
    await expect(tool.call({ url, method: 'PUT' }, tc)).rejects.toThrow(
      /invalid arguments for http_request: method/,
    );
  });
});

describe('shell_exec', () => {
  it('is refused without --allow-shell, in drones and banelings', async () => {
    const dir = tempDir();
    const h = loadIn(dir, { name: 's', desc: 'd', nodes: [{ usr_prompt: 'x', tools: ['shell_exec'] }] });
    const model = new Scripted(['never']);
    const err = (await new Runtime({ providers: { openai: model }, env: {} })
      .run(h)
      .catch((e) => e)) as HatcheryError;
    expect(err.message).toContain('shell_exec is disabled: start with --allow-shell');
    expect(model.calls).toHaveLength(0);
    await expect(baneling('shell_exec', { argv: ['true'] })).rejects.toThrow(/shell_exec is disabled/);
  });

  it('runs argv without a shell when allowed: templated input stays one argument', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'pwned');
    const input = `x; touch ${marker} $(touch ${marker})`;
    const out = await baneling(
      'shell_exec',
      { argv: ['printf', '%s', '{{ ctx.input }}'] },
      { dir, allowShell: true, input },
    );
    expect(out).toBe(input);
    await expect(baneling('list_dir', {}, { dir })).resolves.not.toContain('pwned');
  });

  it('gives the model exit codes, stderr and timeouts as error results; cwd is confined', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'work'));
    const h = loadIn(dir, { name: 's', desc: 'd', nodes: [{ usr_prompt: 'x', tools: ['shell_exec'] }] });
    const model = new Scripted([
      {
        toolCalls: [
          {
            name: 'shell_exec',
            args: { argv: [process.execPath, '-e', 'console.error("oops"); process.exit(3)'] },
          },
          {
            name: 'shell_exec',
            args: { argv: [process.execPath, '-e', 'setTimeout(() => {}, 30000)'], timeout_ms: 200 },
          },
          { name: 'shell_exec', args: { argv: ['pwd'], cwd: 'work' } },
          { name: 'shell_exec', args: { argv: ['pwd'], cwd: '/' } },
          { name: 'shell_exec', args: { argv: ['cat'], stdin: 'fed' } },
        ],
      },
      'done',
    ]);
    // A working folder must be writable: the hatchery's folder is protected unless opened with --allow-write.
    const res = await new Runtime({
      providers: { openai: model },
      env: {},
      allowWrite: [path.join(dir, 'work')],
      tools: { allowShell: true },
    }).run(h);
    expect(res.output).toBe('done');
    const [failed, slow, pwd, outside, cat] = toolResults(model);
    expect(failed).toMatchObject({
      isError: true,
      content: expect.stringMatching(/exited with code 3\nstderr: oops/),
    });
    expect(slow).toMatchObject({ isError: true, content: expect.stringContaining('killed after 200 ms') });
    expect(pwd).toMatchObject({ isError: false, content: `${path.join(dir, 'work')}\n` });
    expect(outside).toMatchObject({
      isError: true,
      content: expect.stringContaining('outside the write roots'),
    });
    expect(cat).toMatchObject({ isError: false, content: 'fed' });
  });

  it('reports a missing program', async () => {
    await expect(
      baneling('shell_exec', { argv: ['no-such-program-xyz'] }, { allowShell: true }),
    ).rejects.toThrow(/program not found: "no-such-program-xyz"/);
  });
});

describe('built-in tools in a drone', () => {
  it('reads and writes files for the model', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'f',
      desc: 'd',
      nodes: [{ usr_prompt: 'x', tools: ['write_file', 'read_file'] }],
    });
    const model = new Scripted([
      callTool('write_file', { path: 'out/note.txt', content: 'hello' }),
      callTool('read_file', { path: 'out/note.txt' }),
      (req) => String(req.messages.at(-1)?.content),
    ]);
    // Writes below the hatchery's own folder need --allow-write on (a folder inside) it.
    const runtime = new Runtime({
      providers: { openai: model },
      env: {},
      allowWrite: [path.join(dir, 'out')],
    });
    expect((await runtime.run(h)).output).toBe('hello');
  });
});
