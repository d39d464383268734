/**
 * A model endpoint that never stops streaming, or answers with a small gzip body that inflates to
 * a quarter of a gigabyte, fails the call with an error naming --max-reply-bytes, through the real SDKs and
 * the built CLI, and the server's memory stays bounded: 16 such calls at once in a server with a
 * 160 MB heap, then a normal call that succeeds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { runCli } from '../helpers.js';
import { hatcheryDir, spawnCli, textOf, writeHatchery } from '../mcp/helpers.js';

let hostile: http.Server;
let base: string;
let hits = 0;
const openai = new FakeOpenAI();

beforeAll(async () => {
  // 256 MiB of text in about 0.25 MB of gzip, as a chat completion.
  const bomb = zlib.gzipSync(
    Buffer.concat([
      Buffer.from(
        '{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"',
      ),
      Buffer.alloc(256 * 1024 * 1024, 'a'),
      Buffer.from('"},"finish_reason":"stop"}]}'),
    ]),
  );
  const chunk = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: 'a'.repeat(4096) } }] })}\n\n`;
  hostile = http.createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/bomb')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(bomb);
        return;
      }
      // Streams for as long as the client reads.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) {}
      };
      res.on('drain', pump);
      pump();
    });
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  await openai.start();
}, 60_000);

afterAll(async () => {
  hostile.closeAllConnections();
  await new Promise((r) => hostile.close(r));
  await openai.close();
});

const drone = (baseUrl: string, model = 'gpt-4o-mini') => ({
  name: 'h',
  desc: 'asks a model',
  nodes: [{ name: 'A', model, base_url: baseUrl, usr_prompt: 'hi {{ ctx.input }}' }],
});

describe('the model reply cap', () => {
  it('cuts a never-ending stream and a gzip bomb, for OpenAI and Anthropic, naming the limit', async () => {
    const dir = hatcheryDir();
    const cases = [
      [`${base}/forever/v1`, 'gpt-4o-mini'],
      [`${base}/bomb/v1`, 'gpt-4o-mini'],
      [`${base}/forever`, 'claude-sonnet-4-5'],
      [`${base}/bomb`, 'claude-sonnet-4-5'],
    ] as const;
    for (const [i, [url, model]] of cases.entries()) {
      const file = writeHatchery(dir, `h${i}.json`, { ...drone(url, model), name: `h${i}` });
      const r = await runCli(['run', file, '--input', 'x', '--max-reply-bytes', '1048576'], {
        env: {
          OPENAI_API_KEY: 'test-key',
          ANTHROPIC_API_KEY: 'test-key',
          NODE_OPTIONS: '--max-old-space-size=160',
        },
      });
      expect(r.code, `${url} ${model}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain('passed 1048576 bytes (--max-reply-bytes)');
      expect(r.stderr).not.toMatch(/heap out of memory|Node\.js v\d/);
    }
  }, 120_000);

  it('16 never-ending streams at once leave the server serving, within a 160 MB heap', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'endless.json', { ...drone(`${base}/forever/v1`), name: 'endless' });
    writeHatchery(dir, 'fine.json', { ...drone(`${openai.url}/v1`), name: 'fine' });
    openai.reset();
    openai.enqueue({ text: 'all good' });
    const server = await spawnCli(dir, {
      env: { OPENAI_API_KEY: 'test-key', NODE_OPTIONS: '--max-old-space-size=160' },
      args: ['--max-reply-bytes', '4194304'],
    });
    try {
      const calls = await Promise.all(
        Array.from({ length: 16 }, () =>
          server.client.callTool({ name: 'endless', arguments: { input: 'x' } }),
        ),
      );
      for (const res of calls) {
        expect(res.isError).toBe(true);
        expect(textOf(res)).toContain('passed 4194304 bytes (--max-reply-bytes)');
      }
      const ok = await server.client.callTool({ name: 'fine', arguments: { input: 'x' } });
      expect(textOf(ok)).toBe('all good');
      expect(server.stderr()).not.toMatch(/heap out of memory/);
    } finally {
      await server.close();
    }
    expect(hits).toBeGreaterThan(0);
  }, 120_000);
});
