/**
 * Issue 8, oversized stdio messages: a result, error text or description over the SDK client's
 * 10 MiB message limit made the client drop the connection and the server exit. The built CLI
 * is served over stdio to the real SDK client; after each trigger the server must still answer.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import {
  droneDef,
  echoDef,
  fakeEnv,
  hatcheryDir,
  jsonOf,
  spawnCli,
  textOf,
  writeHatchery,
} from '../mcp/helpers.js';

const MiB = 1024 * 1024;
/** What the SDK client accepts in one message; everything sent must stay well below. */
const CLIENT_LIMIT = 10 * MiB;

const { openai, anthropic } = fakeVendors();
let dir: string;
let server: Awaited<ReturnType<typeof spawnCli>>;
let client: Client;
/** Size of every message the client received, largest first. */
let biggest = 0;

beforeAll(async () => {
  dir = hatcheryDir();
  writeFileSync(
    path.join(dir, 'big.mjs'),
    `export function big(args) { return 'x'.repeat(Number(args.n)); }
export const bigSchema = { type: 'object', properties: { n: { type: 'string' } }, required: ['n'] };`,
  );
  writeHatchery(dir, 'big.json', {
    name: 'big_result',
    desc: 'returns as many characters as asked',
    nodes: [{ name: 'Big', type: 'tool', tool_name: 'js:big.mjs#big', tool_args: { n: '{{ ctx.input }}' } }],
  });
  writeHatchery(dir, 'hello.json', echoDef('hello', 'hi '));
  writeHatchery(dir, 'model.json', droneDef('model_reply'));
  writeHatchery(dir, 'desc.json', { ...echoDef('huge_desc'), desc: `${'d'.repeat(11 * MiB)} end` });
  // A 1.1 MB file with a JSON syntax error near its end.
  writeHatchery(
    dir,
    'broken-syntax.json',
    `{"name": "broken_syntax", "desc": "${'y'.repeat(1_100_000)}", "nodes": [`,
  );
  // A 1 MB file whose 260,000 validation problems made a 26 MB error message.
  writeHatchery(
    dir,
    'broken-many.json',
    JSON.stringify({
      name: 'broken_many',
      desc: 'd',
      nodes: Array.from({ length: 130_000 }, () => ({ x: 1 })),
    }),
  );
  // Model replies are capped at 8 MiB by default; this server takes the 50 MB one below.
  server = await spawnCli(dir, {
    env: fakeEnv(openai.baseURL, anthropic.baseURL),
    args: ['--max-reply-bytes', String(64 * MiB)],
  });
  client = server.client;
  const onmessage = server.transport.onmessage!;
  server.transport.onmessage = (m) => {
    biggest = Math.max(biggest, Buffer.byteLength(JSON.stringify(m)));
    onmessage(m);
  };
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** The server is still there: it lists its tools and runs one. */
async function stillServing(): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['hello', 'big_result', 'huge_desc', 'hatchery_list']));
  expect(textOf(await client.callTool({ name: 'hello', arguments: { input: 'again' } }))).toBe('hi again');
}

describe('oversized messages do not end the stdio server', () => {
  it('cuts an 11 MB desc in the tool list and refuses the 11 MB file as a resource', async () => {
    const tool = (await client.listTools()).tools.find((t) => t.name === 'huge_desc')!;
    expect(Buffer.byteLength(tool.description!)).toBeLessThan(4200);
    expect(tool.description).toMatch(/^d+… \(11\.5 MB more\)$/);
    const resource = (await client.listResources()).resources.find((r) => r.name === 'huge_desc')!;
    expect(Buffer.byteLength(resource.description!)).toBeLessThan(4200);
    await expect(client.readResource({ uri: resource.uri })).rejects.toThrow(
      /huge_desc: the file is 11\.5 MB, over the server's limit of 1\.0 MB per message/,
    );
    await stillServing();
  });

  it('reports broken 1.1 MB files in capped messages', async () => {
    const list = await client.callTool({ name: 'hatchery_list', arguments: {} });
    const problems = (list.structuredContent as { problems: string[] }).problems;
    expect(problems).toHaveLength(2);
    for (const p of problems) expect(Buffer.byteLength(p)).toBeLessThan(70_000);
    expect(problems.join('\n')).toContain('broken-syntax.json');
    expect(problems.join('\n')).toContain('broken-many.json');
    expect(server.stderr()).toContain('broken-many.json');
    await stillServing();
  });

  it('moves a 12 MB result to resources, keeping the full output readable', async () => {
    const n = 12_000_000;
    const result = await client.callTool({ name: 'big_result', arguments: { input: String(n) } });
    // A summary in both copies: the start of the output, its size and where the rest is.
    const summary = jsonOf(result);
    expect(summary).toEqual(result.structuredContent);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(10_000);
    expect(summary).toMatchObject({ output_bytes: n, output_parts: 12 });
    expect(summary.output_preview).toMatch(/^x+…$/);
    const first = String(summary.output_uri);
    expect(first).toMatch(/^hatchery-output:\/\/[0-9a-f-]+\/1$/);
    const link = (result.content as { type: string; uri?: string }[]).find((c) => c.type === 'resource_link');
    expect(link?.uri).toBe(first);
    // Parts 1 … 12 hold the whole output, each under the result limit.
    let total = 0;
    for (let i = 1; i <= 12; i++) {
      const part = await client.readResource({ uri: first.replace(/\/1$/, `/${i}`) });
      const t = (part.contents[0] as { text: string }).text;
      expect(Buffer.byteLength(t)).toBeLessThanOrEqual(MiB);
      total += t.length;
    }
    expect(total).toBe(n);
    await stillServing();
  }, 60_000);

  it('moves a 50 MB model reply to resources', async () => {
    openai.enqueue({ text: 'z'.repeat(50_000_000) });
    const result = await client.callTool({ name: 'model_reply', arguments: { input: 'talk a lot' } });
    expect(jsonOf(result)).toMatchObject({
      output_bytes: 50_000_000,
      output_preview: expect.stringMatching(/^z+…$/),
    });
    await stillServing();
  }, 60_000);

  it('skips an 11 MB request from the client, answering it with an error', async () => {
    await expect(
      client.callTool({ name: 'hello', arguments: { input: 'w'.repeat(11 * MiB) } }),
    ).rejects.toThrow(/a client message of 11\.5 MB was skipped: over the server's limit/);
    await stillServing();
  }, 60_000);

  it('cuts results at --max-result-bytes', async () => {
    const small = hatcheryDir();
    writeFileSync(path.join(small, 'big.mjs'), readFileSync(path.join(dir, 'big.mjs')));
    writeHatchery(small, 'big.json', {
      name: 'big_result',
      desc: 'd',
      nodes: [
        { name: 'Big', type: 'tool', tool_name: 'js:big.mjs#big', tool_args: { n: '{{ ctx.input }}' } },
      ],
    });
    const s = await spawnCli(small, { args: ['--max-result-bytes', '4096'] });
    try {
      const fits = await s.client.callTool({ name: 'big_result', arguments: { input: '3000' } });
      expect(textOf(fits)).toBe('x'.repeat(3000));
      // The inline limit is never above the result limit: 5,000 bytes go to a resource.
      const cut = await s.client.callTool({ name: 'big_result', arguments: { input: '5000' } });
      expect(Buffer.byteLength(JSON.stringify(cut.content))).toBeLessThanOrEqual(2 * 4096);
      expect(jsonOf(cut)).toMatchObject({ output_bytes: 5000, output_parts: 2 });
    } finally {
      await s.close();
    }
  });

  it('never sent a message near the client limit', () => {
    expect(biggest).toBeGreaterThan(MiB);
    expect(biggest).toBeLessThan(CLIENT_LIMIT / 3);
  });
});
